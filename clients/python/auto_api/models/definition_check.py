from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.problem_issue import ProblemIssue





T = TypeVar("T", bound="DefinitionCheck")



@_attrs_define
class DefinitionCheck:
    """ `check_definition`: what a save of the body would say; nothing is saved.

        Attributes:
            valid (bool): Whether a save would be taken.
            issues (list[ProblemIssue]): What a save would be refused for, as in its problem document: fields and the
                document's
                issues, each with its line where it has one.
            warnings (list[str]): The warnings the definition would be saved with.
            input_schema (Any | Unset):
            output_schema (Any | Unset):
            overview (None | str | Unset): A workflow's generated overview, with its diagram.
     """

    valid: bool
    issues: list[ProblemIssue]
    warnings: list[str]
    input_schema: Any | Unset = UNSET
    output_schema: Any | Unset = UNSET
    overview: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.problem_issue import ProblemIssue # noqa: PLC0415
        valid = self.valid

        issues = []
        for issues_item_data in self.issues:
            issues_item = issues_item_data.to_dict()
            issues.append(issues_item)



        warnings = self.warnings



        input_schema = self.input_schema

        output_schema = self.output_schema

        overview: None | str | Unset
        if isinstance(self.overview, Unset):
            overview = UNSET
        else:
            overview = self.overview


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "valid": valid,
            "issues": issues,
            "warnings": warnings,
        })
        if input_schema is not UNSET:
            field_dict["input_schema"] = input_schema
        if output_schema is not UNSET:
            field_dict["output_schema"] = output_schema
        if overview is not UNSET:
            field_dict["overview"] = overview

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.problem_issue import ProblemIssue # noqa: PLC0415
        d = dict(src_dict)
        valid = d.pop("valid")

        issues = []
        _issues = d.pop("issues")
        for issues_item_data in (_issues):
            issues_item = ProblemIssue.from_dict(issues_item_data)



            issues.append(issues_item)


        warnings = cast(list[str], d.pop("warnings"))


        input_schema = d.pop("input_schema", UNSET)

        output_schema = d.pop("output_schema", UNSET)

        def _parse_overview(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        overview = _parse_overview(d.pop("overview", UNSET))


        definition_check = cls(
            valid=valid,
            issues=issues,
            warnings=warnings,
            input_schema=input_schema,
            output_schema=output_schema,
            overview=overview,
        )


        definition_check.additional_properties = d
        return definition_check

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
