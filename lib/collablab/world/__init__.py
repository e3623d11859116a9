"""The symbolic household every embodied study shares: VirtualHome's evolving-graph executor for
many agents (:class:`Household`), scenes and their loading, goals, actions, rendered views, the
object catalogue and the apartment generator; :mod:`.camera` and :mod:`.eyes` render an agent's four views."""

from .actions import Action
from .apartments import make_apartment
from .goals import GoalError, Predicate, goal_dict, parse_goal, validate_goal
from .household import ActionResult, Household, check_n_agents
from .scene import Door, Scene, SceneError, load_virtualhome_graph, scene_from_mecobench

__all__ = ["Action", "ActionResult", "Door", "GoalError", "Household", "Predicate", "Scene", "SceneError",
           "check_n_agents", "goal_dict", "load_virtualhome_graph", "make_apartment", "parse_goal",
           "scene_from_mecobench", "validate_goal"]
