from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.request_status import RequestStatus
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.request_definition import RequestDefinition





T = TypeVar("T", bound="RequestOut")



@_attrs_define
class RequestOut:
    """ A request of the inbox: what an interaction function's run asks a person.

        Attributes:
            request_id (str):
            run_id (str): The interaction's run, which ends with the answer.
            definition (RequestDefinition): The definition a request belongs to.
            to (str): Who is asked: the definition's `to`, rendered with the run's input.
            message (str): The request, Markdown: the definition's body rendered with the run's input.
            input_ (Any): The run's input.
            status (RequestStatus): Where a request stands.
            created_at (datetime.datetime):
            expires_at (datetime.datetime): When an open request expires and its run ends unanswered.
            output_schema (Any | Unset): The JSON Schema the answer must match; null when any JSON value answers.
            answered_by (None | str | Unset):
            answer (Any | Unset):
     """

    request_id: str
    run_id: str
    definition: RequestDefinition
    to: str
    message: str
    input_: Any
    status: RequestStatus
    created_at: datetime.datetime
    expires_at: datetime.datetime
    output_schema: Any | Unset = UNSET
    answered_by: None | str | Unset = UNSET
    answer: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.request_definition import RequestDefinition # noqa: PLC0415
        request_id = self.request_id

        run_id = self.run_id

        definition = self.definition.to_dict()

        to = self.to

        message = self.message

        input_ = self.input_

        status = self.status.value

        created_at = self.created_at.isoformat()

        expires_at = self.expires_at.isoformat()

        output_schema = self.output_schema

        answered_by: None | str | Unset
        if isinstance(self.answered_by, Unset):
            answered_by = UNSET
        else:
            answered_by = self.answered_by

        answer = self.answer


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "request_id": request_id,
            "run_id": run_id,
            "definition": definition,
            "to": to,
            "message": message,
            "input": input_,
            "status": status,
            "created_at": created_at,
            "expires_at": expires_at,
        })
        if output_schema is not UNSET:
            field_dict["output_schema"] = output_schema
        if answered_by is not UNSET:
            field_dict["answered_by"] = answered_by
        if answer is not UNSET:
            field_dict["answer"] = answer

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.request_definition import RequestDefinition # noqa: PLC0415
        d = dict(src_dict)
        request_id = d.pop("request_id")

        run_id = d.pop("run_id")

        definition = RequestDefinition.from_dict(d.pop("definition"))




        to = d.pop("to")

        message = d.pop("message")

        input_ = d.pop("input")

        status = RequestStatus(d.pop("status"))




        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))




        output_schema = d.pop("output_schema", UNSET)

        def _parse_answered_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        answered_by = _parse_answered_by(d.pop("answered_by", UNSET))


        answer = d.pop("answer", UNSET)

        request_out = cls(
            request_id=request_id,
            run_id=run_id,
            definition=definition,
            to=to,
            message=message,
            input_=input_,
            status=status,
            created_at=created_at,
            expires_at=expires_at,
            output_schema=output_schema,
            answered_by=answered_by,
            answer=answer,
        )


        request_out.additional_properties = d
        return request_out

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
