from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DeletedOut")



@_attrs_define
class DeletedOut:
    """ What deleting a playbook or an org removed.

        Attributes:
            playbooks (int):
            definitions (int):
            runs (int): Every run, ended or not.
            started_runs (int): The runs among them that were still started (a delete with `force`).
            events (int): Every event of the logs.
     """

    playbooks: int
    definitions: int
    runs: int
    started_runs: int
    events: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        playbooks = self.playbooks

        definitions = self.definitions

        runs = self.runs

        started_runs = self.started_runs

        events = self.events


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "playbooks": playbooks,
            "definitions": definitions,
            "runs": runs,
            "started_runs": started_runs,
            "events": events,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        playbooks = d.pop("playbooks")

        definitions = d.pop("definitions")

        runs = d.pop("runs")

        started_runs = d.pop("started_runs")

        events = d.pop("events")

        deleted_out = cls(
            playbooks=playbooks,
            definitions=definitions,
            runs=runs,
            started_runs=started_runs,
            events=events,
        )


        deleted_out.additional_properties = d
        return deleted_out

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
