"""A sampling profiler for every Python process of a pagerunner run (driver, workers, device owner),
for finding what bounds a configuration; not part of the package.

    PR_PROF=DIR PYTHONPATH=benchmarks/profile_site:$PYTHONPATH pagerunner run ...

Every PR_PROF_DT seconds (0.01) each thread's innermost frame inside the project (or else its top
frame) is counted by (thread name, function, file:line); DIR/<pid>.txt gets the counts, the process's
argv, its start and end time, and when each project frame was first seen (a startup timeline). The
file is rewritten every 2 s and at exit, so processes that are killed leave it too. On 2 cores it
cost ~7 % of a 12-page run's wall time.
"""
import os
if os.environ.get("PR_PROF"):
    import atexit, collections, sys, threading, time
    _start = time.time()
    _counts = collections.Counter()
    _first = {}
    _stop = threading.Event()
    def _where(frame):
        top = frame
        f = frame
        while f is not None:
            fn = f.f_code.co_filename
            if ("/runner/" in fn or "/model_cache/" in fn or "/jobs/" in fn or "/outputs/" in fn):
                return f"{f.f_code.co_name} {fn.rsplit('/', 2)[-2]}/{fn.rsplit('/', 1)[-1]}:{f.f_lineno}", \
                       f"{top.f_code.co_name} {top.f_code.co_filename.rsplit('/', 1)[-1]}:{top.f_lineno}"
            f = f.f_back
        return "-", f"{top.f_code.co_name} {top.f_code.co_filename.rsplit('/', 1)[-1]}:{top.f_lineno}"
    def _sample():
        me = threading.get_ident()
        last = time.time()
        while not _stop.wait(float(os.environ.get("PR_PROF_DT", "0.01"))):
            if time.time() - last > 2.0:
                last = time.time()
                try:
                    _dump(final=False)
                except Exception:
                    pass
            names = {t.ident: t.name for t in threading.enumerate()}
            now = time.time() - _start
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                proj, top = _where(frame)
                key = (names.get(ident, "?"), proj, top)
                _counts[key] += 1
                _first.setdefault(proj, now)
    threading.Thread(target=_sample, name="prof", daemon=True).start()
    def _dump(final=True):
        if final:
            _stop.set()
        out = os.path.join(os.environ["PR_PROF"], f"{os.getpid()}.txt")
        with open(out, "w") as fh:
            fh.write(f"argv {sys.argv!r} start {_start:.3f} end {time.time():.3f}\n")
            for (thread, proj, top), n in list(_counts.most_common(60)):
                fh.write(f"{n:6d} {thread:14s} {proj:70s} | {top}\n")
            fh.write("first seen:\n")
            for proj, t in sorted(list(_first.items()), key=lambda kv: kv[1])[:80]:
                fh.write(f"  {t:7.3f} {proj}\n")
    atexit.register(_dump)
