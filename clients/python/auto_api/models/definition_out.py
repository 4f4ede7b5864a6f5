from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.definition_status import DefinitionStatus
from ..models.definition_type import DefinitionType
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="DefinitionOut")



@_attrs_define
class DefinitionOut:
    """ A definition as `get_definition` returns it.

        Attributes:
            type_ (DefinitionType): A definition's type.
            name (str):
            version (int):
            status (DefinitionStatus): Whether a definition runs.
            source (str):
            diagram (str):
            warnings (list[str]):
            triggers (list[Any]):
            used_by (list[str]): The active definitions of the playbook that use this one, as `type/name`.
            created_at (datetime.datetime):
            updated_at (datetime.datetime):
            description (None | str | Unset):
            overview (None | str | Unset): Left out by `list_definitions`.
            input_schema (Any | Unset):
            output_schema (Any | Unset):
            triggers_since (None | str | Unset): For an active workflow with triggers: the id of the event that saved its
                current version.
     """

    type_: DefinitionType
    name: str
    version: int
    status: DefinitionStatus
    source: str
    diagram: str
    warnings: list[str]
    triggers: list[Any]
    used_by: list[str]
    created_at: datetime.datetime
    updated_at: datetime.datetime
    description: None | str | Unset = UNSET
    overview: None | str | Unset = UNSET
    input_schema: Any | Unset = UNSET
    output_schema: Any | Unset = UNSET
    triggers_since: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        name = self.name

        version = self.version

        status = self.status.value

        source = self.source

        diagram = self.diagram

        warnings = self.warnings



        triggers = self.triggers



        used_by = self.used_by



        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        overview: None | str | Unset
        if isinstance(self.overview, Unset):
            overview = UNSET
        else:
            overview = self.overview

        input_schema = self.input_schema

        output_schema = self.output_schema

        triggers_since: None | str | Unset
        if isinstance(self.triggers_since, Unset):
            triggers_since = UNSET
        else:
            triggers_since = self.triggers_since


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "type": type_,
            "name": name,
            "version": version,
            "status": status,
            "source": source,
            "diagram": diagram,
            "warnings": warnings,
            "triggers": triggers,
            "used_by": used_by,
            "created_at": created_at,
            "updated_at": updated_at,
        })
        if description is not UNSET:
            field_dict["description"] = description
        if overview is not UNSET:
            field_dict["overview"] = overview
        if input_schema is not UNSET:
            field_dict["input_schema"] = input_schema
        if output_schema is not UNSET:
            field_dict["output_schema"] = output_schema
        if triggers_since is not UNSET:
            field_dict["triggers_since"] = triggers_since

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = DefinitionType(d.pop("type"))




        name = d.pop("name")

        version = d.pop("version")

        status = DefinitionStatus(d.pop("status"))




        source = d.pop("source")

        diagram = d.pop("diagram")

        warnings = cast(list[str], d.pop("warnings"))


        triggers = cast(list[Any], d.pop("triggers"))


        used_by = cast(list[str], d.pop("used_by"))


        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))


        def _parse_overview(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        overview = _parse_overview(d.pop("overview", UNSET))


        input_schema = d.pop("input_schema", UNSET)

        output_schema = d.pop("output_schema", UNSET)

        def _parse_triggers_since(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        triggers_since = _parse_triggers_since(d.pop("triggers_since", UNSET))


        definition_out = cls(
            type_=type_,
            name=name,
            version=version,
            status=status,
            source=source,
            diagram=diagram,
            warnings=warnings,
            triggers=triggers,
            used_by=used_by,
            created_at=created_at,
            updated_at=updated_at,
            description=description,
            overview=overview,
            input_schema=input_schema,
            output_schema=output_schema,
            triggers_since=triggers_since,
        )


        definition_out.additional_properties = d
        return definition_out

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
