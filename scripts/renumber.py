"""Renumber the chapters of a dwlit checkout sequentially (01, 02, ...), in their current order (14b after 14), or as
a mapping says.

python renumber.py ROOT [--apply]                          without --apply: the mapping and every changed line (a dry run)
python renumber.py ROOT --map 02_memory=02_memory,... [--apply]     only these chapters, to these numbers

Renames nbs/PART/NN_x.ipynb (within its part's folder), and rewrites in every text file of the repository: file stems (NN_x),
link labels ([8](07_x.ipynb) -> the linked chapter's new number), and prose references "chapter 8",
"chapters 8 and 13", "chapters 9-10", "appendix 28" (all numbers through the same old -> new map)."""
import re
import subprocess
import sys
from pathlib import Path

root = Path(sys.argv[1]).resolve()
apply = '--apply' in sys.argv
nbs = root / 'nbs'
rx = re.compile(r'^(\d\d)([a-z]?)_(\w+)\.ipynb$')
chs = sorted((int(m.group(1)), m.group(2), f.stem) for f in nbs.glob('*/*.ipynb') if (m := rx.match(f.name)))
folder = {f.stem: f.parent.name for f in nbs.glob('*/*.ipynb')}
given = next((a.split('=', 1)[1] for a in sys.argv if a.startswith('--map=')), None) or \
        (sys.argv[sys.argv.index('--map') + 1] if '--map' in sys.argv else None)
if given:                                                                  # old=new pairs: only these move
    stem_new = {s: s for _, _, s in chs} | dict(kv.split('=') for kv in given.split(','))
    tag_of = lambda s: (lambda m: f"{int(m.group(1))}{m.group(2)}")(rx.match(s + '.ipynb'))
    tag_new = {tag_of(s): tag_of(n) for s, n in stem_new.items()}
else:
    tag_new = {f"{n}{l}": i + 1 for i, (n, l, _) in enumerate(chs)}       # '14b' -> 16
    stem_new = {s: f"{i + 1:02d}_{rx.match(s + '.ipynb').group(3)}" for i, (_, _, s) in enumerate(chs)}
print('mapping:'); [print(f"  {s:28s} -> {stem_new[s]}") for _, _, s in chs]

re_stem = re.compile(r'(?<![\w.-])(' + '|'.join(map(re.escape, sorted(stem_new, key=len, reverse=True))) + r')(?=[^\w]|$)')
re_label = re.compile(r'\[((?:[Cc]hapter |[Aa]ppendix )?)(\d{1,2}[a-z]?)\]\((?:\.\./\w+/|\w+/)?(\d\d[a-z]?_\w+)(?=[.#)])')
NUM = r'\d{1,2}[a-z]?'
re_prose = re.compile(r'\b([Cc]hapters?|[Aa]ppendix|[Aa]ppendices)(\s+)(' + NUM + r'(?:(?:\s*[-–]\s*|,\s*|\s+and\s+|\s+or\s+|\s+to\s+)' + NUM + r')*)\b(?![\w.]*_)')


def renum(tag: str) -> str:
    t = tag.lstrip('0') or '0'
    return str(tag_new[t]).lstrip('0') if t in tag_new else tag


def fix_label(m):
    "A link labelled with a chapter number gets the new number of the chapter it links (zero-padded if it was)."
    words, label, stem = m.group(1), m.group(2), m.group(3)
    n = tag_new.get(re.match(r'\d\d[a-z]?', stem).group(0).lstrip('0'))
    if n is None: return m.group(0)
    n = str(n)
    return m.group(0).replace(f"[{words}{label}]", f"[{words}{n.zfill(2) if label.startswith('0') else n}]", 1)


def fix_prose(m):
    nums = re.sub(NUM, lambda k: renum(k.group(0)), m.group(3))
    return f"{m.group(1)}{m.group(2)}{nums}"


def rewrite(text: str) -> str:
    text = re_prose.sub(fix_prose, text)
    text = re_label.sub(fix_label, text)                       # labels from the (old) stems they link, whatever prose did
    return re_stem.sub(lambda m: stem_new[m.group(1)], text)


files = [Path(root, f) for f in subprocess.run(['git', 'ls-files'], cwd=root, capture_output=True, text=True).stdout.split()]
changed = 0
for f in files:
    if f.suffix not in ('.ipynb', '.md', '.py', '.yml', '.txt', '.toml', '.cfg', '.css', '') or not f.is_file(): continue
    try: old = f.read_text()
    except UnicodeDecodeError: continue
    new = rewrite(old)
    if new == old: continue
    changed += 1
    if apply: f.write_text(new)
    else:
        import difflib
        for a, b in zip(old.splitlines(), new.splitlines()):
            if a == b: continue
            sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
            for tag, i1, i2, j1, j2 in sm.get_opcodes():
                if tag != 'equal': print(f"{f.relative_to(root)}: ...{a[max(0, i1 - 50):i2 + 15]!r} -> {b[j1:j2]!r}")
print(f"{changed} files {'rewritten' if apply else 'would change'}")
if apply:
    for _, _, s in chs:
        if stem_new[s] == s: continue
        d = folder[s]
        subprocess.run(['git', 'mv', f'nbs/{d}/{s}.ipynb', f'nbs/{d}/{stem_new[s]}.ipynb'], cwd=root, check=True)
