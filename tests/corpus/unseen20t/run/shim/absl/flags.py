"""DEFINE_{string,integer,float,bool,boolean,enum,multi_float,multi_integer,multi_string}; --name=value, --name value,
--flag / --noflag; FLAGS(argv) parses and returns the leftover argv; flags_into_string()."""


class _Flags:
    def __init__(self):
        object.__setattr__(self, "_defs", {})
        object.__setattr__(self, "_vals", {})

    def _define(self, name, default, conv, multi=False, choices=None, is_bool=False):
        self._defs[name] = (conv, multi, choices, is_bool)
        self._vals[name] = list(default) if multi and default is not None else default

    def __getattr__(self, name):
        try:
            return self._vals[name]
        except KeyError:
            raise AttributeError(name)

    def __setattr__(self, name, value):
        self._vals[name] = value

    def __call__(self, argv):
        rest, seen_multi, i = [argv[0]], set(), 1
        while i < len(argv):
            a = argv[i]
            if not a.startswith("--"):
                rest.append(a); i += 1; continue
            key, eq, val = a[2:].partition("=")
            if key not in self._defs and key.startswith("no") and key[2:] in self._defs and self._defs[key[2:]][3]:
                self._vals[key[2:]] = False; i += 1; continue
            if key not in self._defs:
                raise SystemExit("FATAL Flags parsing error: Unknown command line flag '%s'" % key)
            conv, multi, choices, is_bool = self._defs[key]
            if is_bool and not eq:
                self._vals[key] = True; i += 1; continue
            if not eq:
                val = argv[i + 1]; i += 1
            i += 1
            v = conv(val)
            if choices is not None and v not in choices:
                raise SystemExit("FATAL Flags parsing error: flag --%s=%s: value should be one of %s" % (key, val, list(choices)))
            if multi:
                if key not in seen_multi:
                    self._vals[key] = []; seen_multi.add(key)
                self._vals[key].append(v)
            else:
                self._vals[key] = v
        return rest

    def flags_into_string(self):
        out = []
        for k, v in self._vals.items():
            for x in (v if isinstance(v, list) else [v]):
                out.append("--%s=%s" % (k, x))
        return "\n".join(out) + "\n"


FLAGS = _Flags()


def _bool(s):
    return str(s).lower() in ("1", "true", "t", "yes", "y")


def DEFINE_string(name, default, help=None, **k): FLAGS._define(name, default, str)
def DEFINE_integer(name, default, help=None, **k): FLAGS._define(name, default, int)
def DEFINE_float(name, default, help=None, **k): FLAGS._define(name, default, float)
def DEFINE_bool(name, default, help=None, **k): FLAGS._define(name, default, _bool, is_bool=True)
DEFINE_boolean = DEFINE_bool
def DEFINE_enum(name, default, enum_values, help=None, **k): FLAGS._define(name, default, str, choices=list(enum_values))
def DEFINE_multi_float(name, default, help=None, **k): FLAGS._define(name, default, float, multi=True)
def DEFINE_multi_integer(name, default, help=None, **k): FLAGS._define(name, default, int, multi=True)
def DEFINE_multi_string(name, default, help=None, **k): FLAGS._define(name, default, str, multi=True)
