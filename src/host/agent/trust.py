# agent/trust.py, a part of the sitepatch agent (start.py says how the parts are joined):
# the agent's Python starts with -I -S, so nothing of the environment has run yet; before
# `site` runs its .pth files and imports sitecustomize, every folder it would import from
# and each .pth file must pass unsafe_path. A refusal ends the agent with exit 95 and one
# line (host/agent_client.cpp shows it as it is).
#
# `site` itself decides which folders those are (its own venv, getsitepackages, user site
# and .pth logic, whatever the version and the distribution's patches): its addsitedir is
# wrapped to check a site folder and each .pth in it, and each folder a .pth line names,
# before the real one reads them; whatever else reached sys.path (an `import` line's code)
# is checked before sitecustomize is imported. An audit hook then refuses source and
# compiled code opened for import from anywhere another user can change, for the rest
# of the agent's life: an editable install's finder maps names to folders no list shows.

_TRUSTED = {}
_SAFE_DIRS = set()  # real folders (no link on the way) that passed the whole walk


class Untrusted(Exception):
    pass


def _last_name_only(key):
    # In a folder that passed the whole walk nobody else can swap a name: an entry that is
    # no link needs only its own owner, mode and ACL judged (one lstat, not a walk from /).
    # (why, its lstat); why "" when it passed; (None, None): walk it all.
    parent = os.path.dirname(key)
    if parent not in _SAFE_DIRS:
        return None, None
    try:
        st = os.lstat(key)
    except OSError:
        return None, None
    if stat.S_ISLNK(st.st_mode):
        return None, None
    if st.st_uid not in (0, os.geteuid()):
        return "%s belongs to uid %d, another user" % (key, st.st_uid), st
    return _writable_by_others(key, st, stat.S_ISDIR(st.st_mode)) or "", st


def _must_trust(path, role):
    key = os.path.abspath(path)
    if key in _TRUSTED:
        return
    why, st = _last_name_only(key)
    if why is None:
        why = unsafe_path(key)
    if why:
        raise Untrusted("%s, %s" % (why, role))
    if st is None:
        if not os.path.lexists(key):
            return  # judged by the folder it would be made in: asked again once it is there
        real = os.path.isdir(key) and os.path.realpath(key) == key
    else:
        real = stat.S_ISDIR(st.st_mode)  # no link, in a real folder: real itself
    _TRUSTED[key] = True
    if real:
        _SAFE_DIRS.add(key)


def _pth_folders(sitedir, name):
    # A .pth file's path lines as site.addpackage reads them: each joined to the site
    # folder, kept when it exists; `import` lines are code, the file's owner's to choose.
    try:
        with open(os.path.join(sitedir, name), "rb") as f:
            data = f.read()
    except OSError:
        return []
    out = []
    for raw in data.splitlines():
        line = raw.decode("utf-8", "surrogateescape").lstrip("\ufeff")
        if not line.strip() or line.startswith("#") or line.startswith(("import ", "import\t")):
            continue
        # site.makepath's own form: abspath first (`link/..` is undone on paper, not by
        # the kernel), then the existence test.
        folder = os.path.abspath(os.path.join(sitedir, line.rstrip()))
        if os.path.exists(folder):
            out.append(folder)
    return out


def _check_site_folder(sitedir):
    _must_trust(sitedir, "a site folder whose .pth files and modules Python runs")
    try:
        # Every .pth, hidden ones too: older versions of site read them.
        names = sorted(n for n in os.listdir(sitedir) if n.endswith(".pth"))
    except OSError:
        return
    for name in names:
        pth = os.path.join(sitedir, name)
        _must_trust(pth, "a .pth file Python runs at every start")
        for folder in _pth_folders(sitedir, name):
            _must_trust(folder, "which %s puts on sys.path (an editable install of a shared checkout? the checkout "
                                "must belong to root or you, and be writable by no one else)" % pth)


_STARTED_WITH = set()  # sys.path at start: the standard library, checked before Python started


def _check_sys_path(role):
    for d in list(sys.path):
        if d and d not in _STARTED_WITH and os.path.exists(d):
            _must_trust(d, role)


def _guard_imports(refusals):
    # Every file opened to be read the way code is (io.open_code and open() raise "open"
    # with mode 'r'; the agent's own reads go through os.open): source, bytecode, a zip on
    # sys.path (zipimport reads its modules from the archive's bytes), a file runpy runs.
    # Judged by where it lies, never by its name. A refusal inside `site` would be printed
    # and skipped by it, so it is also kept in `refusals`.
    def hook(event, args):
        if event != "open" or len(args) < 2 or args[1] != "r":
            return
        path = args[0]
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return  # a descriptor: opened, and judged, before
        try:
            _must_trust(os.path.dirname(os.path.abspath(path)) or ".", "where Python reads code from")
            _must_trust(path, "a file Python reads code from")
        except Untrusted as e:
            refusals.append(str(e))
            raise

    if hasattr(sys, "addaudithook"):
        sys.addaudithook(hook)

    # An extension module is loaded without an "open" event (dlopen): its loader is
    # wrapped instead, so a compiled module from an unchecked folder (an editable
    # finder's checkout) is refused before it is loaded.
    # The import system's own class (importlib.machinery's is the same object): importing
    # the importlib package would cost every start its `warnings`.
    try:
        loader = sys.modules["_frozen_importlib_external"].ExtensionFileLoader
        real_create = loader.create_module
    except (KeyError, AttributeError):
        return

    def create_module(self, spec):
        path = getattr(self, "path", None) or getattr(spec, "origin", None)
        if path:
            try:
                _must_trust(os.path.dirname(os.path.abspath(path)) or ".", "where Python imports code from")
                _must_trust(path, "compiled code Python imports")
            except Untrusted as e:
                refusals.append(str(e))
                raise ImportError(str(e))
        return real_create(self, spec)

    loader.create_module = create_module


def start_site():
    """Runs what `python` without -S runs at start (site.main()), once every folder it
    imports from passed unsafe_path; ends the agent with exit 95 naming the first that
    did not."""
    if not sys.flags.no_site:
        return  # started without -S: site has run already, and must not run twice
    refusals = []
    try:
        # The standard library (its folder, zip and lib-dynload) is what Python imported
        # from before this code ran: host/start_check.cpp and the ssh `sh` check judged it
        # before Python started; here it would be too late to matter.
        _STARTED_WITH.update(p for p in sys.path if p)
        # And so what lies below it is judged by its own name alone (a module's __pycache__).
        for p in _STARTED_WITH:
            if os.path.isdir(p) and os.path.realpath(p) == p:
                _SAFE_DIRS.add(p)
                _TRUSTED[p] = True
        real_addsitedir = site.addsitedir

        def addsitedir(sitedir, known_paths=None):
            if os.path.isdir(sitedir):
                _check_site_folder(sitedir)
            return real_addsitedir(sitedir, known_paths)

        site.addsitedir = addsitedir
        for name in ("execsitecustomize", "execusercustomize"):
            real = getattr(site, name, None)
            if real is None:
                continue

            def checked(real=real):
                _check_sys_path("a folder on sys.path, where sitecustomize is looked for")
                return real()

            setattr(site, name, checked)
        _guard_imports(refusals)
        site.main()
        site.addsitedir = real_addsitedir
        # -I leaves the user's site folder out, but site_folders reports it back (the
        # programs patched see it), so its modules are read and imported: it is judged
        # too, once site.main() set sys.prefix to the venv's.
        user = isolated_user_site()
        if user and os.path.isdir(user):
            _check_site_folder(user)
        if refusals:
            raise Untrusted(refusals[0])
    except Untrusted as e:
        sys.stderr.write("refusing to run %s: %s\n" % (sys.executable, e))
        sys.stderr.flush()
        os._exit(95)
