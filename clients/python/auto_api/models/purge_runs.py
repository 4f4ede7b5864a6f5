from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="PurgeRuns")



@_attrs_define
class PurgeRuns:
    """ `POST /v1/orgs/{org}/playbooks/{pb}/purge`.

        Attributes:
            ended_before (str): RFC 3339, such as `2025-01-31T00:00:00Z`, not in the future: the runs that ended before
                it are removed with their events.
     """

    ended_before: str





    def to_dict(self) -> dict[str, Any]:
        ended_before = self.ended_before


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "ended_before": ended_before,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ended_before = d.pop("ended_before")

        purge_runs = cls(
            ended_before=ended_before,
        )

        return purge_runs

