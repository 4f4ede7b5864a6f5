from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.definition_type import DefinitionType
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="CreateDefinition")



@_attrs_define
class CreateDefinition:
    """ `create_definition`: saves version 1 of a new definition.

        Attributes:
            type_ (DefinitionType): A definition's type.
            name (str): `^[a-z][a-z0-9-]{0,63}$`
            source (str): The document: Markdown with YAML front matter, or a workflow's YAML.
            diagram (str): Mermaid whose first line starts with flowchart, graph or stateDiagram, at most 8,192
                bytes, or the word none. Required on every save.
            overview (None | str | Unset): Markdown for the person who runs the business: 1 character to 16,384 bytes.
     """

    type_: DefinitionType
    name: str
    source: str
    diagram: str
    overview: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        name = self.name

        source = self.source

        diagram = self.diagram

        overview: None | str | Unset
        if isinstance(self.overview, Unset):
            overview = UNSET
        else:
            overview = self.overview


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "type": type_,
            "name": name,
            "source": source,
            "diagram": diagram,
        })
        if overview is not UNSET:
            field_dict["overview"] = overview

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = DefinitionType(d.pop("type"))




        name = d.pop("name")

        source = d.pop("source")

        diagram = d.pop("diagram")

        def _parse_overview(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        overview = _parse_overview(d.pop("overview", UNSET))


        create_definition = cls(
            type_=type_,
            name=name,
            source=source,
            diagram=diagram,
            overview=overview,
        )

        return create_definition

