from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.reason import Reason
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.problem_issue import ProblemIssue





T = TypeVar("T", bound="Problem")



@_attrs_define
class Problem:
    """ A rejection, as a problem document.

        Attributes:
            type_ (str): `https://on.auto/problems/` and the reason.
            title (str): What was refused, in a sentence.
            status (int): The HTTP status of the reason.
            reason (Reason): Why a run or a request was refused; failed: the server broke down, never a rejection the caller
                caused.
            detail (str): What happened and what to do, in words.
            kind (None | str | Unset): The pages' finer kind of the reason, such as unworkable, expired or rebuilding.
            because (None | str | Unset): What caused it, where the pages name a cause, such as model_unavailable.
            run_id (None | str | Unset): The run that was rejected, for a run's rejection.
            retry_after_seconds (int | None | Unset): The seconds a provider asked to wait before trying again, when it
                said.
            issues (list[ProblemIssue] | Unset): Each problem of the input: where (its pointer, and for a document its line,
                column
                and path) and what, in words.
     """

    type_: str
    title: str
    status: int
    reason: Reason
    detail: str
    kind: None | str | Unset = UNSET
    because: None | str | Unset = UNSET
    run_id: None | str | Unset = UNSET
    retry_after_seconds: int | None | Unset = UNSET
    issues: list[ProblemIssue] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.problem_issue import ProblemIssue # noqa: PLC0415
        type_ = self.type_

        title = self.title

        status = self.status

        reason = self.reason.value

        detail = self.detail

        kind: None | str | Unset
        if isinstance(self.kind, Unset):
            kind = UNSET
        else:
            kind = self.kind

        because: None | str | Unset
        if isinstance(self.because, Unset):
            because = UNSET
        else:
            because = self.because

        run_id: None | str | Unset
        if isinstance(self.run_id, Unset):
            run_id = UNSET
        else:
            run_id = self.run_id

        retry_after_seconds: int | None | Unset
        if isinstance(self.retry_after_seconds, Unset):
            retry_after_seconds = UNSET
        else:
            retry_after_seconds = self.retry_after_seconds

        issues: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.issues, Unset):
            issues = []
            for issues_item_data in self.issues:
                issues_item = issues_item_data.to_dict()
                issues.append(issues_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "type": type_,
            "title": title,
            "status": status,
            "reason": reason,
            "detail": detail,
        })
        if kind is not UNSET:
            field_dict["kind"] = kind
        if because is not UNSET:
            field_dict["because"] = because
        if run_id is not UNSET:
            field_dict["run_id"] = run_id
        if retry_after_seconds is not UNSET:
            field_dict["retry_after_seconds"] = retry_after_seconds
        if issues is not UNSET:
            field_dict["issues"] = issues

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.problem_issue import ProblemIssue # noqa: PLC0415
        d = dict(src_dict)
        type_ = d.pop("type")

        title = d.pop("title")

        status = d.pop("status")

        reason = Reason(d.pop("reason"))




        detail = d.pop("detail")

        def _parse_kind(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        kind = _parse_kind(d.pop("kind", UNSET))


        def _parse_because(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        because = _parse_because(d.pop("because", UNSET))


        def _parse_run_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run_id = _parse_run_id(d.pop("run_id", UNSET))


        def _parse_retry_after_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        retry_after_seconds = _parse_retry_after_seconds(d.pop("retry_after_seconds", UNSET))


        _issues = d.pop("issues", UNSET)
        issues: list[ProblemIssue] | Unset = UNSET
        if _issues is not UNSET:
            issues = []
            for issues_item_data in _issues:
                issues_item = ProblemIssue.from_dict(issues_item_data)



                issues.append(issues_item)


        problem = cls(
            type_=type_,
            title=title,
            status=status,
            reason=reason,
            detail=detail,
            kind=kind,
            because=because,
            run_id=run_id,
            retry_after_seconds=retry_after_seconds,
            issues=issues,
        )


        problem.additional_properties = d
        return problem

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
