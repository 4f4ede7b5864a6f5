from enum import StrEnum

class RunStatus(StrEnum):
    FAILED = "failed"
    REJECTED = "rejected"
    STARTED = "started"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
