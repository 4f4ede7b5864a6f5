from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.run_definition_input import RunDefinitionInput





T = TypeVar("T", bound="RunDefinition")



@_attrs_define
class RunDefinition:
    """ `run_definition`: runs the latest active version of a definition.

        Attributes:
            input_ (RunDefinitionInput | Unset): The input object; `{}` when left out.
            run_id (None | str | Unset): Your id for the run, 1 to 128 of `[A-Za-z0-9._:-]`, to read it later or retry it; a
                new
                UUIDv7 when left out.
     """

    input_: RunDefinitionInput | Unset = UNSET
    run_id: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.run_definition_input import RunDefinitionInput # noqa: PLC0415
        input_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.input_, Unset):
            input_ = self.input_.to_dict()

        run_id: None | str | Unset
        if isinstance(self.run_id, Unset):
            run_id = UNSET
        else:
            run_id = self.run_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if input_ is not UNSET:
            field_dict["input"] = input_
        if run_id is not UNSET:
            field_dict["run_id"] = run_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_definition_input import RunDefinitionInput # noqa: PLC0415
        d = dict(src_dict)
        _input_ = d.pop("input", UNSET)
        input_: RunDefinitionInput | Unset
        if isinstance(_input_,  Unset):
            input_ = UNSET
        else:
            input_ = RunDefinitionInput.from_dict(_input_)




        def _parse_run_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run_id = _parse_run_id(d.pop("run_id", UNSET))


        run_definition = cls(
            input_=input_,
            run_id=run_id,
        )

        return run_definition

