from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.check_out import CheckOut





T = TypeVar("T", bound="ExecuteOut")



@_attrs_define
class ExecuteOut:
    """ What a call came to, or would check.

        Attributes:
            server (str):
            tool (str):
            read_only (bool):
            dry_run (bool):
            arguments_bytes (int):
            checks (list[CheckOut]): Each check a run makes before it sends the call, and whether it passed.
            content (None | str | Unset): What the run's model would see of the result (absent for a dry run or a refused
                call).
            is_error (bool | None | Unset): Whether the model would see it as a tool error.
            failed_because (None | str | Unset): Why the call failed, as `tool_call_failed` names it.
            event_id (None | str | Unset): The id of the call's `tool_call_started` event in the playbook's history.
     """

    server: str
    tool: str
    read_only: bool
    dry_run: bool
    arguments_bytes: int
    checks: list[CheckOut]
    content: None | str | Unset = UNSET
    is_error: bool | None | Unset = UNSET
    failed_because: None | str | Unset = UNSET
    event_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.check_out import CheckOut # noqa: PLC0415
        server = self.server

        tool = self.tool

        read_only = self.read_only

        dry_run = self.dry_run

        arguments_bytes = self.arguments_bytes

        checks = []
        for checks_item_data in self.checks:
            checks_item = checks_item_data.to_dict()
            checks.append(checks_item)



        content: None | str | Unset
        if isinstance(self.content, Unset):
            content = UNSET
        else:
            content = self.content

        is_error: bool | None | Unset
        if isinstance(self.is_error, Unset):
            is_error = UNSET
        else:
            is_error = self.is_error

        failed_because: None | str | Unset
        if isinstance(self.failed_because, Unset):
            failed_because = UNSET
        else:
            failed_because = self.failed_because

        event_id: None | str | Unset
        if isinstance(self.event_id, Unset):
            event_id = UNSET
        else:
            event_id = self.event_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "server": server,
            "tool": tool,
            "read_only": read_only,
            "dry_run": dry_run,
            "arguments_bytes": arguments_bytes,
            "checks": checks,
        })
        if content is not UNSET:
            field_dict["content"] = content
        if is_error is not UNSET:
            field_dict["is_error"] = is_error
        if failed_because is not UNSET:
            field_dict["failed_because"] = failed_because
        if event_id is not UNSET:
            field_dict["event_id"] = event_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.check_out import CheckOut # noqa: PLC0415
        d = dict(src_dict)
        server = d.pop("server")

        tool = d.pop("tool")

        read_only = d.pop("read_only")

        dry_run = d.pop("dry_run")

        arguments_bytes = d.pop("arguments_bytes")

        checks = []
        _checks = d.pop("checks")
        for checks_item_data in (_checks):
            checks_item = CheckOut.from_dict(checks_item_data)



            checks.append(checks_item)


        def _parse_content(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        content = _parse_content(d.pop("content", UNSET))


        def _parse_is_error(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        is_error = _parse_is_error(d.pop("is_error", UNSET))


        def _parse_failed_because(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        failed_because = _parse_failed_because(d.pop("failed_because", UNSET))


        def _parse_event_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        event_id = _parse_event_id(d.pop("event_id", UNSET))


        execute_out = cls(
            server=server,
            tool=tool,
            read_only=read_only,
            dry_run=dry_run,
            arguments_bytes=arguments_bytes,
            checks=checks,
            content=content,
            is_error=is_error,
            failed_because=failed_because,
            event_id=event_id,
        )


        execute_out.additional_properties = d
        return execute_out

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
