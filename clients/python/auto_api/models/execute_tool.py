from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.execute_tool_arguments import ExecuteToolArguments





T = TypeVar("T", bound="ExecuteTool")



@_attrs_define
class ExecuteTool:
    """ `execute` and `dry_run`: the arguments of one call.

        Attributes:
            arguments (ExecuteToolArguments | Unset): The tool's arguments, a JSON object; `{}` when left out.
            dry_run (bool | Unset): Report what the call would check, and call nothing. Default: False.
     """

    arguments: ExecuteToolArguments | Unset = UNSET
    dry_run: bool | Unset = False





    def to_dict(self) -> dict[str, Any]:
        from ..models.execute_tool_arguments import ExecuteToolArguments # noqa: PLC0415
        arguments: dict[str, Any] | Unset = UNSET
        if not isinstance(self.arguments, Unset):
            arguments = self.arguments.to_dict()

        dry_run = self.dry_run


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if arguments is not UNSET:
            field_dict["arguments"] = arguments
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.execute_tool_arguments import ExecuteToolArguments # noqa: PLC0415
        d = dict(src_dict)
        _arguments = d.pop("arguments", UNSET)
        arguments: ExecuteToolArguments | Unset
        if isinstance(_arguments,  Unset):
            arguments = UNSET
        else:
            arguments = ExecuteToolArguments.from_dict(_arguments)




        dry_run = d.pop("dry_run", UNSET)

        execute_tool = cls(
            arguments=arguments,
            dry_run=dry_run,
        )

        return execute_tool

