from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="PurgeOut")



@_attrs_define
class PurgeOut:
    """ What a purge removed.

        Attributes:
            ended_before (datetime.datetime):
            runs (int): Runs removed.
            events (int): Events of those runs removed: their `seq`s are holes in the log, never given again.
     """

    ended_before: datetime.datetime
    runs: int
    events: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        ended_before = self.ended_before.isoformat()

        runs = self.runs

        events = self.events


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "ended_before": ended_before,
            "runs": runs,
            "events": events,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ended_before = datetime.datetime.fromisoformat(d.pop("ended_before"))




        runs = d.pop("runs")

        events = d.pop("events")

        purge_out = cls(
            ended_before=ended_before,
            runs=runs,
            events=events,
        )


        purge_out.additional_properties = d
        return purge_out

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
