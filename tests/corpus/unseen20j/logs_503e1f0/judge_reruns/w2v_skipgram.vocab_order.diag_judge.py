# Judge diagnostic (not ddpify code): the vocabulary lines of the converted Word2Vec-Skipgram(Softmax)_ddp.py (its first 8
# assignments inside `with ddpify.distributed():`, now including ddpify.agreed(list(set(...)))) run once per rank under
# torchrun, inside the same `with ddpify.distributed():`; prints each rank's word_dict and the PYTHONHASHSEED it ran with.
import os, ast
src = open(os.environ["W2V_SCRIPT"]).read()
tree = ast.parse(src)
main_if = next(n for n in tree.body if isinstance(n, ast.If))
with_stmt = main_if.body[0]  # `with ddpify.distributed():`
pre = [s for s in with_stmt.body if isinstance(s, ast.Assign)][:8]  # batch_size ... voc_size
# written with os.write to fd 2 (the runtime may keep print to rank 0 only)
show = ast.parse('os.write(2, ("rank %s PYTHONHASHSEED %s raw set order %s word_dict %s\\n" % (os.environ.get("RANK"), os.environ.get("PYTHONHASHSEED"), list(set(word_sequence)), word_dict)).encode())').body
with_stmt.body = pre + show
ns = {"os": os}
imports = [n for n in tree.body if isinstance(n, ast.Import) and any("ddpify" in a.name for a in n.names)]  # import ddpify.runtime as ddpify (matplotlib is a corpus shim, not needed)
exec(compile(ast.fix_missing_locations(ast.Module(imports + [with_stmt], [])), "w2v", "exec"), ns)
