"""MECoBench's task templates (mecobench.txt appendix A.1, Table 4), the legal initial
locations of Table 5, and the slot capacities our generated suite uses."""

from __future__ import annotations

from dataclasses import dataclass

#: Table 5: legal initial locations.
LEGAL_CONTAINERS = ("fridge", "stove", "dishwasher", "microwave", "cabinet", "bookshelf")
LEGAL_SURFACES = ("sofa", "cabinet", "bathroomcounter", "nightstand", "bench", "bed", "desk", "tvstand",
                  "kitchencounter", "coffeetable", "stove", "kitchentable")

#: Surface/container slots (a symbolic stand-in for the paper's area and bounding-box checks).
CAPACITY = {"default_surface": 4, "default_container": 3, "kitchentable": 6, "kitchencounter": 5,
            "bed": 5, "fridge": 5, "bookshelf": 4, "desk": 5, "coffeetable": 6, "bathroomcounter": 5}


@dataclass(frozen=True)
class Template:
    name: str
    relation: str  # "on" | "inside"
    target: str
    objects: tuple[str, ...]


#: Table 4: the eight task templates.
TEMPLATES: tuple[Template, ...] = (
    Template("self_caring", "on", "bathroomcounter", ("toothbrush", "toothpaste", "towel", "barsoap")),
    Template("work_on_desk", "on", "desk", ("keyboard", "mouse", "cellphone", "mug")),
    Template("gaming_setup", "on", "coffeetable", ("boardgame", "remotecontrol", "magazine", "toy", "book")),
    Template("afternoon_tea", "on", "coffeetable", ("cupcake", "juice", "wine", "pudding", "apple")),
    Template("wash_dishes", "inside", "dishwasher", ("plate", "waterglass", "wineglass", "cutleryfork")),
    Template("prepare_food", "on", "kitchentable",
             ("cupcake", "juice", "pancake", "poundcake", "wine", "pudding", "apple", "coffeepot")),
    Template("food_in_fridge", "inside", "fridge",
             ("cupcake", "juice", "pancake", "poundcake", "wine", "pudding", "apple")),
    Template("setup_dinner", "on", "kitchentable", ("plate", "waterglass", "wineglass", "cutleryfork")),
)
TEMPLATE_NAMES = tuple(t.name for t in TEMPLATES)
