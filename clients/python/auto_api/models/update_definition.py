from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="UpdateDefinition")



@_attrs_define
class UpdateDefinition:
    """ `update_definition`: saves the next version; an update that changes nothing makes none.

        Attributes:
            source (str):
            diagram (str):
            overview (None | str | Unset): Left out: the overview saved before is kept.
     """

    source: str
    diagram: str
    overview: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        source = self.source

        diagram = self.diagram

        overview: None | str | Unset
        if isinstance(self.overview, Unset):
            overview = UNSET
        else:
            overview = self.overview


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "source": source,
            "diagram": diagram,
        })
        if overview is not UNSET:
            field_dict["overview"] = overview

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        source = d.pop("source")

        diagram = d.pop("diagram")

        def _parse_overview(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        overview = _parse_overview(d.pop("overview", UNSET))


        update_definition = cls(
            source=source,
            diagram=diagram,
            overview=overview,
        )

        return update_definition

