"""Link checks for the notebooks: the anchors a page defines and the links that point at them (the sources and glossary
chapters run these, and tests/test_repo.py runs them over the whole book)."""
import json
import re
from pathlib import Path


def anchors_in(nb_path) -> set:
    "The `<a id=...>` anchors a notebook's markdown cells define."
    nb = json.loads(Path(nb_path).read_text())
    return {m for c in nb['cells'] if c['cell_type'] == 'markdown'
            for m in re.findall(r'<a id="([\w-]+)"></a>', ''.join(c['source']))}

def links_to(page, folder='.') -> dict:
    "{anchor: notebooks that link to `page#anchor`}, over the other notebooks of `folder` and its parts' folders."
    found = {}
    for f in sorted(Path(folder).rglob('*.ipynb')):
        if f.name == page: continue
        text = ''.join(''.join(c['source']) for c in json.loads(f.read_text())['cells'])
        for a in re.findall(re.escape(page) + r'#([\w-]+)', text): found.setdefault(a, set()).add(f.name)
    return found

def dangling(page, folder='.') -> dict:
    "{anchor: notebooks} for links to anchors that `page` (a notebook of `folder`'s parts) does not define."
    entries = anchors_in(next(Path(folder).rglob(page)))
    return {a: sorted(fs) for a, fs in links_to(page, folder).items() if a not in entries}
