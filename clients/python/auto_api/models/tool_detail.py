from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="ToolDetail")



@_attrs_define
class ToolDetail:
    """ `introspect`: one tool in full.

        Attributes:
            server (str):
            name (str):
            model_name (str):
            description (str):
            read_only (bool):
            input_schema (Any): The schema of the tool's arguments, as the server lists it and a run sends it.
            warnings (list[str]): The parts of the schema a provider may refuse or not enforce.
     """

    server: str
    name: str
    model_name: str
    description: str
    read_only: bool
    input_schema: Any
    warnings: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        server = self.server

        name = self.name

        model_name = self.model_name

        description = self.description

        read_only = self.read_only

        input_schema = self.input_schema

        warnings = self.warnings




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "server": server,
            "name": name,
            "model_name": model_name,
            "description": description,
            "read_only": read_only,
            "input_schema": input_schema,
            "warnings": warnings,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        server = d.pop("server")

        name = d.pop("name")

        model_name = d.pop("model_name")

        description = d.pop("description")

        read_only = d.pop("read_only")

        input_schema = d.pop("input_schema")

        warnings = cast(list[str], d.pop("warnings"))


        tool_detail = cls(
            server=server,
            name=name,
            model_name=model_name,
            description=description,
            read_only=read_only,
            input_schema=input_schema,
            warnings=warnings,
        )


        tool_detail.additional_properties = d
        return tool_detail

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
