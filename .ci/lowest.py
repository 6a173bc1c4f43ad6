"""Print each dependency's lowest allowed version as a pip constraint (name==version)."""

import re
import tomllib

with open("pyproject.toml", "rb") as fh:
    for dep in tomllib.load(fh)["project"]["dependencies"]:
        bound = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", dep.strip())
        if bound:
            print(f"{bound[1]}=={bound[2]}")
