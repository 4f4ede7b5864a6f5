from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.event_in_specversion import EventInSpecversion
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="EventIn")



@_attrs_define
class EventIn:
    """ A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one when left out and `source`
    `/callers/<caller>`; extension attributes (lowercase letters and digits) may be added beside them.

        Attributes:
            type_ (str): What happened, such as order.placed.
            specversion (EventInSpecversion | Unset): The CloudEvents version, 1.0 when left out.
            id (str | Unset): The event's id; a new one when left out. An id the playbook (or the run) received before is
                not recorded again.
            source (str | Unset): Who says it happened, a URI reference; /callers/<caller> when left out.
            subject (str | Unset): What it happened to, within the source.
            time (datetime.datetime | Unset): When it happened; when it was recorded when left out.
            datacontenttype (str | Unset): The media type of data; application/json when left out.
            data (Any | Unset): What happened, as JSON.
     """

    type_: str
    specversion: EventInSpecversion | Unset = UNSET
    id: str | Unset = UNSET
    source: str | Unset = UNSET
    subject: str | Unset = UNSET
    time: datetime.datetime | Unset = UNSET
    datacontenttype: str | Unset = UNSET
    data: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        specversion: str | Unset = UNSET
        if not isinstance(self.specversion, Unset):
            specversion = self.specversion.value


        id = self.id

        source = self.source

        subject = self.subject

        time: str | Unset = UNSET
        if not isinstance(self.time, Unset):
            time = self.time.isoformat()

        datacontenttype = self.datacontenttype

        data = self.data


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "type": type_,
        })
        if specversion is not UNSET:
            field_dict["specversion"] = specversion
        if id is not UNSET:
            field_dict["id"] = id
        if source is not UNSET:
            field_dict["source"] = source
        if subject is not UNSET:
            field_dict["subject"] = subject
        if time is not UNSET:
            field_dict["time"] = time
        if datacontenttype is not UNSET:
            field_dict["datacontenttype"] = datacontenttype
        if data is not UNSET:
            field_dict["data"] = data

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = d.pop("type")

        _specversion = d.pop("specversion", UNSET)
        specversion: EventInSpecversion | Unset
        if isinstance(_specversion,  Unset):
            specversion = UNSET
        else:
            specversion = EventInSpecversion(_specversion)




        id = d.pop("id", UNSET)

        source = d.pop("source", UNSET)

        subject = d.pop("subject", UNSET)

        _time = d.pop("time", UNSET)
        time: datetime.datetime | Unset
        if isinstance(_time,  Unset):
            time = UNSET
        else:
            time = datetime.datetime.fromisoformat(_time)




        datacontenttype = d.pop("datacontenttype", UNSET)

        data = d.pop("data", UNSET)

        event_in = cls(
            type_=type_,
            specversion=specversion,
            id=id,
            source=source,
            subject=subject,
            time=time,
            datacontenttype=datacontenttype,
            data=data,
        )


        event_in.additional_properties = d
        return event_in

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
