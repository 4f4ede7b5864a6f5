from enum import StrEnum

class DefinitionType(StrEnum):
    COMPUTATION = "computation"
    INTERACTION = "interaction"
    PREDICTION = "prediction"
    REASONING = "reasoning"
    RECALL = "recall"
    WORKFLOW = "workflow"

    def __str__(self) -> str:
        return str(self.value)
