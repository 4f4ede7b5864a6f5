from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.playbook_out import PlaybookOut





T = TypeVar("T", bound="PlaybookList")



@_attrs_define
class PlaybookList:
    """ 
        Attributes:
            playbooks (list[PlaybookOut]):
     """

    playbooks: list[PlaybookOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.playbook_out import PlaybookOut # noqa: PLC0415
        playbooks = []
        for playbooks_item_data in self.playbooks:
            playbooks_item = playbooks_item_data.to_dict()
            playbooks.append(playbooks_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "playbooks": playbooks,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.playbook_out import PlaybookOut # noqa: PLC0415
        d = dict(src_dict)
        playbooks = []
        _playbooks = d.pop("playbooks")
        for playbooks_item_data in (_playbooks):
            playbooks_item = PlaybookOut.from_dict(playbooks_item_data)



            playbooks.append(playbooks_item)


        playbook_list = cls(
            playbooks=playbooks,
        )


        playbook_list.additional_properties = d
        return playbook_list

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
