# Names that are not operations performed (except clauses, constants, isinstance,
# annotations, an exception raised) beside ones that are (a call, a callable passed
# on, a class entered with `with`).
import subprocess
from concurrent.futures import ThreadPoolExecutor


def not_performed(p):
    try:
        out = subprocess.check_output(["nvcc", "--version"], stderr=subprocess.STDOUT)
    except (OSError, subprocess.CalledProcessError):
        out = None
    streams = [subprocess.PIPE, subprocess.STDOUT]
    x = subprocess.DEVNULL
    if isinstance(p, subprocess.Popen) or issubclass(type(p), (subprocess.Popen, subprocess.CompletedProcess)):
        q: subprocess.Popen = p
        raise subprocess.CalledProcessError(1, "nvcc")
    return out, streams, x


def performed(paths, cmd):
    with ThreadPoolExecutor() as pool:
        pool.submit(subprocess.run, cmd)
    texts = list(map(open, paths))
    with subprocess.Popen(cmd) as proc:
        proc.wait()
    return texts


def annotated(p: subprocess.Popen) -> subprocess.CompletedProcess:
    return p


def everything(p, paths, cmd):
    not_performed(p)
    performed(paths, cmd)
    annotated(p), renamed(p)


def renamed(path):
    saved_open = open
    return saved_open(path)
