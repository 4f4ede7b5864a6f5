from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="CallerOut")



@_attrs_define
class CallerOut:
    """ `get_caller`: who the request's key is, and what it may do.

        Attributes:
            caller (str): The caller id: the key's, or `local` on a server without keys.
            role (str): admin, editor (definitions), runner (runs and events) or viewer (reads).
            org (None | str | Unset): The one org the key reaches; null for every org.
     """

    caller: str
    role: str
    org: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        caller = self.caller

        role = self.role

        org: None | str | Unset
        if isinstance(self.org, Unset):
            org = UNSET
        else:
            org = self.org


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "caller": caller,
            "role": role,
        })
        if org is not UNSET:
            field_dict["org"] = org

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        caller = d.pop("caller")

        role = d.pop("role")

        def _parse_org(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        org = _parse_org(d.pop("org", UNSET))


        caller_out = cls(
            caller=caller,
            role=role,
            org=org,
        )


        caller_out.additional_properties = d
        return caller_out

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
