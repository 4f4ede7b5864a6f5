from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.tool_server_out import ToolServerOut





T = TypeVar("T", bound="ToolServerList")



@_attrs_define
class ToolServerList:
    """ `search`: the servers set up for the playbook and the tools the operator allows on each.

        Attributes:
            servers (list[ToolServerOut]):
     """

    servers: list[ToolServerOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_server_out import ToolServerOut # noqa: PLC0415
        servers = []
        for servers_item_data in self.servers:
            servers_item = servers_item_data.to_dict()
            servers.append(servers_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "servers": servers,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_server_out import ToolServerOut # noqa: PLC0415
        d = dict(src_dict)
        servers = []
        _servers = d.pop("servers")
        for servers_item_data in (_servers):
            servers_item = ToolServerOut.from_dict(servers_item_data)



            servers.append(servers_item)


        tool_server_list = cls(
            servers=servers,
        )


        tool_server_list.additional_properties = d
        return tool_server_list

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
