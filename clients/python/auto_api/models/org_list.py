from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.org_out import OrgOut





T = TypeVar("T", bound="OrgList")



@_attrs_define
class OrgList:
    """ 
        Attributes:
            orgs (list[OrgOut]):
     """

    orgs: list[OrgOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.org_out import OrgOut # noqa: PLC0415
        orgs = []
        for orgs_item_data in self.orgs:
            orgs_item = orgs_item_data.to_dict()
            orgs.append(orgs_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "orgs": orgs,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.org_out import OrgOut # noqa: PLC0415
        d = dict(src_dict)
        orgs = []
        _orgs = d.pop("orgs")
        for orgs_item_data in (_orgs):
            orgs_item = OrgOut.from_dict(orgs_item_data)



            orgs.append(orgs_item)


        org_list = cls(
            orgs=orgs,
        )


        org_list.additional_properties = d
        return org_list

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
