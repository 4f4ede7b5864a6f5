""" Contains all the data models used in inputs/outputs """

from .answer_interaction import AnswerInteraction
from .caller_out import CallerOut
from .cancel_run import CancelRun
from .check_out import CheckOut
from .create_definition import CreateDefinition
from .create_org import CreateOrg
from .create_playbook import CreatePlaybook
from .definition_check import DefinitionCheck
from .definition_list import DefinitionList
from .definition_out import DefinitionOut
from .definition_status import DefinitionStatus
from .definition_type import DefinitionType
from .definition_versions import DefinitionVersions
from .deleted_out import DeletedOut
from .event_in import EventIn
from .event_in_specversion import EventInSpecversion
from .event_list import EventList
from .event_out import EventOut
from .execute_out import ExecuteOut
from .execute_tool import ExecuteTool
from .execute_tool_arguments import ExecuteToolArguments
from .health import Health
from .model_list import ModelList
from .model_out import ModelOut
from .org_list import OrgList
from .org_out import OrgOut
from .playbook_list import PlaybookList
from .playbook_out import PlaybookOut
from .problem import Problem
from .problem_issue import ProblemIssue
from .purge_out import PurgeOut
from .purge_runs import PurgeRuns
from .reason import Reason
from .request_definition import RequestDefinition
from .request_list import RequestList
from .request_out import RequestOut
from .request_status import RequestStatus
from .run_definition import RunDefinition
from .run_definition_input import RunDefinitionInput
from .run_event_out import RunEventOut
from .run_list import RunList
from .run_out import RunOut
from .run_status import RunStatus
from .tool_detail import ToolDetail
from .tool_out import ToolOut
from .tool_server_failure_out import ToolServerFailureOut
from .tool_server_list import ToolServerList
from .tool_server_out import ToolServerOut
from .update_definition import UpdateDefinition

__all__ = (
    "AnswerInteraction",
    "CallerOut",
    "CancelRun",
    "CheckOut",
    "CreateDefinition",
    "CreateOrg",
    "CreatePlaybook",
    "DefinitionCheck",
    "DefinitionList",
    "DefinitionOut",
    "DefinitionStatus",
    "DefinitionType",
    "DefinitionVersions",
    "DeletedOut",
    "EventIn",
    "EventInSpecversion",
    "EventList",
    "EventOut",
    "ExecuteOut",
    "ExecuteTool",
    "ExecuteToolArguments",
    "Health",
    "ModelList",
    "ModelOut",
    "OrgList",
    "OrgOut",
    "PlaybookList",
    "PlaybookOut",
    "Problem",
    "ProblemIssue",
    "PurgeOut",
    "PurgeRuns",
    "Reason",
    "RequestDefinition",
    "RequestList",
    "RequestOut",
    "RequestStatus",
    "RunDefinition",
    "RunDefinitionInput",
    "RunEventOut",
    "RunList",
    "RunOut",
    "RunStatus",
    "ToolDetail",
    "ToolOut",
    "ToolServerFailureOut",
    "ToolServerList",
    "ToolServerOut",
    "UpdateDefinition",
)
