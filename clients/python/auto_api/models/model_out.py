from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ModelOut")



@_attrs_define
class ModelOut:
    """ One model `list_models` offers.

        Attributes:
            id (str): The reference a reasoning function writes as `model`, such as
                `anthropic/claude-sonnet-4-5`.
            provider (str):
            context_window (int | None | Unset): The most tokens a call's input and output may hold together, from the model
                catalog.
            max_output_tokens (int | None | Unset): The most output tokens the model writes, from the model catalog.
            alias_of (None | str | Unset): For an alias: the model it resolves to.
     """

    id: str
    provider: str
    context_window: int | None | Unset = UNSET
    max_output_tokens: int | None | Unset = UNSET
    alias_of: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        provider = self.provider

        context_window: int | None | Unset
        if isinstance(self.context_window, Unset):
            context_window = UNSET
        else:
            context_window = self.context_window

        max_output_tokens: int | None | Unset
        if isinstance(self.max_output_tokens, Unset):
            max_output_tokens = UNSET
        else:
            max_output_tokens = self.max_output_tokens

        alias_of: None | str | Unset
        if isinstance(self.alias_of, Unset):
            alias_of = UNSET
        else:
            alias_of = self.alias_of


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "id": id,
            "provider": provider,
        })
        if context_window is not UNSET:
            field_dict["context_window"] = context_window
        if max_output_tokens is not UNSET:
            field_dict["max_output_tokens"] = max_output_tokens
        if alias_of is not UNSET:
            field_dict["alias_of"] = alias_of

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        provider = d.pop("provider")

        def _parse_context_window(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        context_window = _parse_context_window(d.pop("context_window", UNSET))


        def _parse_max_output_tokens(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_output_tokens = _parse_max_output_tokens(d.pop("max_output_tokens", UNSET))


        def _parse_alias_of(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        alias_of = _parse_alias_of(d.pop("alias_of", UNSET))


        model_out = cls(
            id=id,
            provider=provider,
            context_window=context_window,
            max_output_tokens=max_output_tokens,
            alias_of=alias_of,
        )


        model_out.additional_properties = d
        return model_out

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
