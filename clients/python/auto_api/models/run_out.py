from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.definition_type import DefinitionType
from ..models.run_status import RunStatus
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="RunOut")



@_attrs_define
class RunOut:
    """ A run, as `get_run` returns it.

        Attributes:
            run_id (str):
            type_ (DefinitionType): A definition's type.
            name (str):
            definition_version (int):
            status (RunStatus): Where a run stands.
            started_by (str):
            started_at (datetime.datetime):
            input_ (Any | Unset): Left out by `list_runs`.
            output (Any | Unset):
            record (Any | Unset):
            problem (Any | Unset): The problem document of a rejected or failed run.
            ended_at (datetime.datetime | None | Unset):
     """

    run_id: str
    type_: DefinitionType
    name: str
    definition_version: int
    status: RunStatus
    started_by: str
    started_at: datetime.datetime
    input_: Any | Unset = UNSET
    output: Any | Unset = UNSET
    record: Any | Unset = UNSET
    problem: Any | Unset = UNSET
    ended_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        run_id = self.run_id

        type_ = self.type_.value

        name = self.name

        definition_version = self.definition_version

        status = self.status.value

        started_by = self.started_by

        started_at = self.started_at.isoformat()

        input_ = self.input_

        output = self.output

        record = self.record

        problem = self.problem

        ended_at: None | str | Unset
        if isinstance(self.ended_at, Unset):
            ended_at = UNSET
        elif isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "run_id": run_id,
            "type": type_,
            "name": name,
            "definition_version": definition_version,
            "status": status,
            "started_by": started_by,
            "started_at": started_at,
        })
        if input_ is not UNSET:
            field_dict["input"] = input_
        if output is not UNSET:
            field_dict["output"] = output
        if record is not UNSET:
            field_dict["record"] = record
        if problem is not UNSET:
            field_dict["problem"] = problem
        if ended_at is not UNSET:
            field_dict["ended_at"] = ended_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        run_id = d.pop("run_id")

        type_ = DefinitionType(d.pop("type"))




        name = d.pop("name")

        definition_version = d.pop("definition_version")

        status = RunStatus(d.pop("status"))




        started_by = d.pop("started_by")

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))




        input_ = d.pop("input", UNSET)

        output = d.pop("output", UNSET)

        record = d.pop("record", UNSET)

        problem = d.pop("problem", UNSET)

        def _parse_ended_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)



                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ended_at = _parse_ended_at(d.pop("ended_at", UNSET))


        run_out = cls(
            run_id=run_id,
            type_=type_,
            name=name,
            definition_version=definition_version,
            status=status,
            started_by=started_by,
            started_at=started_at,
            input_=input_,
            output=output,
            record=record,
            problem=problem,
            ended_at=ended_at,
        )


        run_out.additional_properties = d
        return run_out

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
