from enum import StrEnum

class RequestStatus(StrEnum):
    ANSWERED = "answered"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    OPEN = "open"
    UNDELIVERED = "undelivered"

    def __str__(self) -> str:
        return str(self.value)
