# judge diagnostic: does the AE->net encoder copy transfer weights under DDP, and are c / AUC equal on both ranks?
import os, sys, runpy, torch
import deepSVDD_ddp as M
import optim.deepSVDD_trainer_ddp as T
rank = os.environ.get("RANK", "0")
orig = M.DeepSVDD.init_network_weights_from_pretraining
def patched(self):
    before = {k: v.clone() for k, v in self.net.state_dict().items()}
    ae = self.ae_net.state_dict()
    shared = [k for k in ae if k in before]
    orig(self)
    after = self.net.state_dict()
    changed = sum(not torch.equal(before[k], after[k]) for k in before)
    eq_ae = all(torch.equal(after[k], ae[k]) for k in shared)
    sys.stderr.write("\n" + f"[diag rank{rank}] ae_net type {type(self.ae_net).__name__}; ae keys {len(ae)} (module. {sum(k.startswith('module.') for k in ae)}); net keys {len(before)}; keys copied {len(shared)}; net tensors changed {changed}; net==ae on copied keys {eq_ae}")
M.DeepSVDD.init_network_weights_from_pretraining = patched
orig_train = T.DeepSVDDTrainer.train
def tr(self, dataset, net):
    out = orig_train(self, dataset, net)
    sys.stderr.write("\n" + f"[diag rank{rank}] c sum {float(self.c.sum()):.8f}")
    return out
T.DeepSVDDTrainer.train = tr
orig_test = T.DeepSVDDTrainer.test
def te(self, dataset, net):
    r = orig_test(self, dataset, net)
    sys.stderr.write("\n" + f"[diag rank{rank}] test_auc {self.test_auc:.6f} n_scores {len(self.test_scores)}")
    return r
T.DeepSVDDTrainer.test = te
sys.argv = ["main_ddp.py"] + sys.argv[1:]
runpy.run_path("main_ddp.py", run_name="__main__")
