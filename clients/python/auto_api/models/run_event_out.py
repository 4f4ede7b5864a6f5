from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="RunEventOut")



@_attrs_define
class RunEventOut:
    """ What `send_run_event` answers (202): the run, the event's id (a new one when the event had
    none), and whether the run had received an event of that id before, in which case this one
    was ignored.

        Attributes:
            run_id (str):
            id (str):
            duplicate (bool):
     """

    run_id: str
    id: str
    duplicate: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        run_id = self.run_id

        id = self.id

        duplicate = self.duplicate


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "run_id": run_id,
            "id": id,
            "duplicate": duplicate,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        run_id = d.pop("run_id")

        id = d.pop("id")

        duplicate = d.pop("duplicate")

        run_event_out = cls(
            run_id=run_id,
            id=id,
            duplicate=duplicate,
        )


        run_event_out.additional_properties = d
        return run_event_out

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
