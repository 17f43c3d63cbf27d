"""Pass check for the docstrings eval: every function in every .py file under a folder has a
docstring, and the code still behaves as before."""
import ast
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
missing = []
for path in sorted(root.rglob("*.py")):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(node) is None:
            missing.append(f"{path}:{node.lineno} {node.name}")
if missing:
    print("functions without a docstring:\n" + "\n".join(missing))
    sys.exit(1)

sys.path.insert(0, str(root.parent))
from shapes import area, perimeter  # noqa: E402

assert abs(area.circle(1) - 3.141592653589793) < 1e-9
assert area.rectangle(2, 3) == 6
assert perimeter.square(2) == 8
assert perimeter.Polygon([1, 2, 3]).perimeter() == 6
print("all functions documented; behaviour unchanged")
