from enum import StrEnum

class Reason(StrEnum):
    CANCELLED = "cancelled"
    CONFLICT = "conflict"
    FAILED = "failed"
    FORBIDDEN = "forbidden"
    INVALID_INPUT = "invalid_input"
    NOT_FOUND = "not_found"
    UNANSWERED = "unanswered"
    UNAVAILABLE = "unavailable"

    def __str__(self) -> str:
        return str(self.value)
