from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.tool_out import ToolOut
  from ..models.tool_server_failure_out import ToolServerFailureOut





T = TypeVar("T", bound="ToolServerOut")



@_attrs_define
class ToolServerOut:
    """ 
        Attributes:
            name (str): The name a function's `tools` uses, such as `graph` in `graph/search`.
            transport (str): `http` (MCP over Streamable HTTP) or `stdio`.
            tools (list[ToolOut]): The tools the operator allows, best match of `terms` first.
            failure (None | ToolServerFailureOut | Unset): Why the server could not list its tools now, in the words of
                `tool_server_failed`.
     """

    name: str
    transport: str
    tools: list[ToolOut]
    failure: None | ToolServerFailureOut | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_out import ToolOut # noqa: PLC0415
        from ..models.tool_server_failure_out import ToolServerFailureOut # noqa: PLC0415
        name = self.name

        transport = self.transport

        tools = []
        for tools_item_data in self.tools:
            tools_item = tools_item_data.to_dict()
            tools.append(tools_item)



        failure: dict[str, Any] | None | Unset
        if isinstance(self.failure, Unset):
            failure = UNSET
        elif isinstance(self.failure, ToolServerFailureOut):
            failure = self.failure.to_dict()
        else:
            failure = self.failure


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "name": name,
            "transport": transport,
            "tools": tools,
        })
        if failure is not UNSET:
            field_dict["failure"] = failure

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_out import ToolOut # noqa: PLC0415
        from ..models.tool_server_failure_out import ToolServerFailureOut # noqa: PLC0415
        d = dict(src_dict)
        name = d.pop("name")

        transport = d.pop("transport")

        tools = []
        _tools = d.pop("tools")
        for tools_item_data in (_tools):
            tools_item = ToolOut.from_dict(tools_item_data)



            tools.append(tools_item)


        def _parse_failure(data: object) -> None | ToolServerFailureOut | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                failure_type_0 = ToolServerFailureOut.from_dict(data)



                return failure_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolServerFailureOut | Unset, data)

        failure = _parse_failure(d.pop("failure", UNSET))


        tool_server_out = cls(
            name=name,
            transport=transport,
            tools=tools,
            failure=failure,
        )


        tool_server_out.additional_properties = d
        return tool_server_out

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
