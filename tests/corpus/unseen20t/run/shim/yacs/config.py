"""unseen20h: a small stand-in for yacs (not installed here; StyleGAN.pytorch's config.py): CfgNode is a dict whose keys
are attributes; merge_from_file loads YAML and merges it recursively as yacs does (unknown keys raise KeyError; string
values are decoded by ast.literal_eval when they parse, e.g. device_id: ('3') -> '3'; a value must keep its type,
except list <-> tuple); freeze() makes it read-only."""
import ast
import copy

import yaml


class CfgNode(dict):
    def __init__(self, init_dict=None):
        super().__init__()
        for k, v in (init_dict or {}).items():
            self[k] = CfgNode(v) if isinstance(v, dict) and not isinstance(v, CfgNode) else v
        self.__dict__["_frozen"] = False

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)

    def __setattr__(self, name, value):
        if self.__dict__.get("_frozen"):
            raise AttributeError("Attempted to set %s on a frozen CfgNode" % name)
        self[name] = value

    def freeze(self):
        self.__dict__["_frozen"] = True
        for v in self.values():
            if isinstance(v, CfgNode):
                v.freeze()

    def defrost(self):
        self.__dict__["_frozen"] = False
        for v in self.values():
            if isinstance(v, CfgNode):
                v.defrost()

    def is_frozen(self):
        return self.__dict__["_frozen"]

    def clone(self):
        return copy.deepcopy(self)

    @staticmethod
    def _decode(v):
        if isinstance(v, dict):
            return CfgNode(v)
        if isinstance(v, str):
            try:
                return ast.literal_eval(v)
            except (ValueError, SyntaxError):
                return v
        return v

    def merge_from_other_cfg(self, other, prefix=""):
        for k, v in other.items():
            full = prefix + k
            if k not in self:
                raise KeyError("Non-existent config key: %s" % full)
            v = self._decode(v)
            old = self[k]
            if isinstance(old, CfgNode):
                old.merge_from_other_cfg(v, full + ".")
                continue
            if isinstance(old, (list, tuple)) and isinstance(v, (list, tuple)):
                v = type(old)(v)
            elif old is not None and v is not None and type(old) is not type(v) \
                    and not (isinstance(old, float) and isinstance(v, int)):
                raise ValueError("Type mismatch (%s vs. %s) for config key: %s" % (type(old), type(v), full))
            self[k] = v

    def merge_from_file(self, cfg_filename):
        with open(cfg_filename) as f:
            self.merge_from_other_cfg(CfgNode(yaml.safe_load(f)))

    def merge_from_list(self, cfg_list):
        for k, v in zip(cfg_list[0::2], cfg_list[1::2]):
            node = self
            *path, last = k.split(".")
            for p in path:
                node = node[p]
            node.merge_from_other_cfg({last: v}, k.rsplit(".", 1)[0] + "." if path else "")


CN = CfgNode
