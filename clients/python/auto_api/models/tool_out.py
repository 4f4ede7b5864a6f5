from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ToolOut")



@_attrs_define
class ToolOut:
    """ 
        Attributes:
            name (str):
            model_name (str): The name the model sees, such as `graph__search`.
            description (str):
            read_only (bool): Whether the server marks the tool read-only.
     """

    name: str
    model_name: str
    description: str
    read_only: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        model_name = self.model_name

        description = self.description

        read_only = self.read_only


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "name": name,
            "model_name": model_name,
            "description": description,
            "read_only": read_only,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        model_name = d.pop("model_name")

        description = d.pop("description")

        read_only = d.pop("read_only")

        tool_out = cls(
            name=name,
            model_name=model_name,
            description=description,
            read_only=read_only,
        )


        tool_out.additional_properties = d
        return tool_out

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
