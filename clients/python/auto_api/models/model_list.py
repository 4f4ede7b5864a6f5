from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.model_out import ModelOut





T = TypeVar("T", bound="ModelList")



@_attrs_define
class ModelList:
    """ 
        Attributes:
            models (list[ModelOut]):
            providers (list[str]): The configured providers and gateways.
            allowed (list[str] | None | Unset): The operator's allowed patterns, such as `my-gateway/*`, which also admit
                models the
                catalog does not list; null when every model of a configured provider is allowed.
     """

    models: list[ModelOut]
    providers: list[str]
    allowed: list[str] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.model_out import ModelOut # noqa: PLC0415
        models = []
        for models_item_data in self.models:
            models_item = models_item_data.to_dict()
            models.append(models_item)



        providers = self.providers



        allowed: list[str] | None | Unset
        if isinstance(self.allowed, Unset):
            allowed = UNSET
        elif isinstance(self.allowed, list):
            allowed = self.allowed


        else:
            allowed = self.allowed


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "models": models,
            "providers": providers,
        })
        if allowed is not UNSET:
            field_dict["allowed"] = allowed

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.model_out import ModelOut # noqa: PLC0415
        d = dict(src_dict)
        models = []
        _models = d.pop("models")
        for models_item_data in (_models):
            models_item = ModelOut.from_dict(models_item_data)



            models.append(models_item)


        providers = cast(list[str], d.pop("providers"))


        def _parse_allowed(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                allowed_type_0 = cast(list[str], data)

                return allowed_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        allowed = _parse_allowed(d.pop("allowed", UNSET))


        model_list = cls(
            models=models,
            providers=providers,
            allowed=allowed,
        )


        model_list.additional_properties = d
        return model_list

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
