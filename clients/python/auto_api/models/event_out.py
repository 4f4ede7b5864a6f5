from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="EventOut")



@_attrs_define
class EventOut:
    """ An event as the playbook recorded it: the CloudEvents attributes, with seq (its order in the playbook), run_id where
    it belongs to a run, the attributes the workflow page names where they apply, and in a listing data_bytes instead of
    data when the data is larger than 2 KiB.

        Attributes:
            specversion (str):
            id (str):
            type_ (str): What happened: a run's fact (run_started, run_succeeded...) or a published event's type.
            source (str):
            time (datetime.datetime):
            seq (int): The event's place in the playbook's log.
            subject (str | Unset):
            datacontenttype (str | Unset):
            data (Any | Unset): What happened, as JSON.
            data_bytes (int | Unset): In a listing, the size of data left out for being larger than 2 KiB.
            run_id (str | Unset): The run the event belongs to.
            recorded_at (datetime.datetime | Unset): When the playbook recorded it.
     """

    specversion: str
    id: str
    type_: str
    source: str
    time: datetime.datetime
    seq: int
    subject: str | Unset = UNSET
    datacontenttype: str | Unset = UNSET
    data: Any | Unset = UNSET
    data_bytes: int | Unset = UNSET
    run_id: str | Unset = UNSET
    recorded_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        specversion = self.specversion

        id = self.id

        type_ = self.type_

        source = self.source

        time = self.time.isoformat()

        seq = self.seq

        subject = self.subject

        datacontenttype = self.datacontenttype

        data = self.data

        data_bytes = self.data_bytes

        run_id = self.run_id

        recorded_at: str | Unset = UNSET
        if not isinstance(self.recorded_at, Unset):
            recorded_at = self.recorded_at.isoformat()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "specversion": specversion,
            "id": id,
            "type": type_,
            "source": source,
            "time": time,
            "seq": seq,
        })
        if subject is not UNSET:
            field_dict["subject"] = subject
        if datacontenttype is not UNSET:
            field_dict["datacontenttype"] = datacontenttype
        if data is not UNSET:
            field_dict["data"] = data
        if data_bytes is not UNSET:
            field_dict["data_bytes"] = data_bytes
        if run_id is not UNSET:
            field_dict["run_id"] = run_id
        if recorded_at is not UNSET:
            field_dict["recorded_at"] = recorded_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        specversion = d.pop("specversion")

        id = d.pop("id")

        type_ = d.pop("type")

        source = d.pop("source")

        time = datetime.datetime.fromisoformat(d.pop("time"))




        seq = d.pop("seq")

        subject = d.pop("subject", UNSET)

        datacontenttype = d.pop("datacontenttype", UNSET)

        data = d.pop("data", UNSET)

        data_bytes = d.pop("data_bytes", UNSET)

        run_id = d.pop("run_id", UNSET)

        _recorded_at = d.pop("recorded_at", UNSET)
        recorded_at: datetime.datetime | Unset
        if isinstance(_recorded_at,  Unset):
            recorded_at = UNSET
        else:
            recorded_at = datetime.datetime.fromisoformat(_recorded_at)




        event_out = cls(
            specversion=specversion,
            id=id,
            type_=type_,
            source=source,
            time=time,
            seq=seq,
            subject=subject,
            datacontenttype=datacontenttype,
            data=data,
            data_bytes=data_bytes,
            run_id=run_id,
            recorded_at=recorded_at,
        )


        event_out.additional_properties = d
        return event_out

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
