"""The converter's decisions, one planner per concern. Each planner is ``plan(recording, facts)``:
it reads the :class:`~ddpify.convert.record.Recording` of the script's one walk (and what earlier
planners put into ``facts``) and writes its decisions into :class:`~ddpify.convert.facts.Facts`,
which the transformer then carries out. No planner walks the tree again: they loop over the
recorded lists.

A new rewrite = one planner + one rewrite (convert/rewrites.py) + one snippet
(templates/snippets.py.j2) + one golden fixture (tests/fixtures/convert/<case>/).

:data:`PLANNERS` is the order they run in. Some read what earlier ones wrote:

- ``models.plan_trained`` fills ``Facts.model_keys`` and ``Facts.trained``: the wraps, the
  accumulation loops, checkpoint helpers, side effects and hand-over reports need them;
- ``loaders.plan`` fills ``Facts.loaders`` and ``Facts.loader_variables``: ``epochs.plan``,
  ``loaders.plan_unsharded_evaluation`` and ``handed_over.report`` need them;
- ``models.plan_wraps`` fills ``Facts.model_wraps`` and ``Facts.held_models`` (models left
  unwrapped): ``loaders.hold_back`` unshards the loaders those train;
  ``models.report_conditional_training``,
  ``models.report_moves_after_wrap`` and ``handed_over.report`` need it;
- ``outside_loaders.plan`` reads ``Facts.held_models`` and ``Facts.model_wraps`` (only a
  wrapped model's outside loaders are sharded) and adds to ``Facts.helper_loaders`` and
  ``Facts.loader_variables``: ``epochs.plan`` needs them, and ``batch_lengths.plan_handed_in``
  gives those loaders the per-process batch where a batch size sizes a tensor here;
- ``rank_zero_values.plan`` moves a logging client whose values every rank reads into
  ``Facts.kept_writes`` (left on every rank: the transformer reads it);
- ``side_effects.plan`` fills ``Facts.main_process_only``: ``output_helpers``, ``paths`` and
  ``fetches`` need it (a temporary folder rank 0 writes into; no ``main_process_first`` in
  code rank 0 runs alone);
- ``handed_over.report`` comes late: it skips calls the others rewrote (unsharded arguments,
  statements guarded for rank 0), and adds ``on_rank_device=True`` to ``Facts.wrap_options`` of
  a model it finds handed to another file's trainer.

The rest of the order is the order of ``Facts.manual`` and ``Facts.changes`` (``--annotate``
writes the items of one line in that order), kept as it was when one visitor did it all.
"""

from __future__ import annotations

from collections.abc import Callable

from ddpify.convert.fact_types import Facts
from ddpify.convert.planners import (
    accumulation,
    batch_coupling,
    batch_lengths,
    bootstrap,
    checkpoints,
    device_args,
    device_choice,
    device_tests,
    directories,
    displayed_metrics,
    divergent_exits,
    double_backward,
    downloads,
    drivers,
    environment_seeds,
    epochs,
    fetches,
    file_writes,
    handed_over,
    interactive,
    listed_names,
    loaders,
    logs,
    loop_shapes,
    models,
    output_helpers,
    outside_loaders,
    own_methods,
    paths,
    plateau,
    progress,
    project_writers,
    random_data,
    rank_zero_forwards,
    rank_zero_values,
    reduced_metrics,
    reloads,
    sample_counters,
    set_orders,
    shard_sums,
    side_effects,
    sliced_batches,
    sources,
    unsharded_training,
)
from ddpify.convert.record import Recording

Planner = Callable[[Recording, Facts], None]

PLANNERS: tuple[Planner, ...] = (
    bootstrap.plan,  # where the process group is set up; whether the script is converted already
    loaders.report_iterable_datasets,
    downloads.plan,  # rank 0 downloads first
    models.plan_trained,  # trained models, optimizers; training without an optimizer
    loaders.plan,  # loader roles and every variable holding a loader
    drivers.plan,  # a model built here and handed to another file's trainer: convert the output, report
    models.plan_wraps,  # where each model is wrapped, or why it is not (held)
    reduced_metrics.plan,  # an average of the rank's shard that decisions read: averaged over the ranks
    displayed_metrics.plan,  # an average of the rank's shard that is only shown: averaged over the ranks
    bootstrap.plan_import_time_wraps,  # a wrap at import time needs the group after the imports
    loaders.hold_back,  # loaders of held models stay unsharded
    outside_loaders.plan,  # training batches this file does not build (parameters...): sharded or reported
    batch_lengths.plan_handed_in,  # their batch size used as a batch length here: per-process batch
    sources.plan,  # batch sources that are not DataLoaders: custom iterators, random indices
    sliced_batches.plan,  # X[i:i + bs] in a loop over range(0, n, bs): each rank its part of every batch
    models.report_conditional_training,
    epochs.plan,  # set_epoch
    accumulation.plan,  # no_sync for accumulating micro-batches
    loaders.plan_unsharded_evaluation,  # training loaders handed to evaluation code
    checkpoints.plan,  # project checkpoint helpers on rank 0
    project_writers.plan,  # the project's output helpers (images, logs) on rank 0, given plain models
    models.report_moves_after_wrap,
    double_backward.report,  # a gradient penalty through the DDP model
    fetches.plan_existence_tests,  # `if not exists(p): download`: rank 0 first (side_effects reads it)
    side_effects.plan,  # writes on rank 0
    # the planners after side_effects read Facts.main_process_only (what rank 0 now runs alone);
    # they run before handed_over, which must stay last
    output_helpers.plan,  # this file's helpers that write, whole on rank 0
    paths.plan,  # clock-named directories; temporary folders rank 0 writes into
    directories.plan,  # pathlib mkdir(): exist_ok=True; `from os import mkdir` reported
    directories.plan_refusals,  # `if os.path.exists(out): raise` before creating it: a barrier after the test
    directories.plan_set_up_tests,  # `if exists(d): (rmtree d | exit) else: makedirs(d)`: barriers around it
    reloads.plan,  # a load every rank runs after a save that does not wait: a barrier before it
    fetches.plan,  # other web downloads: rank 0 first (never inside rank-0-only code)
    logs.plan,  # logging configured on rank 0
    logs.plan_file_writer_classes,  # the project's file-writing classes built on rank 0
    logs.plan_logger_helpers,  # `logger = make_logger(...)` of the project: built on rank 0 only
    fetches.plan_directory_helpers,  # the project's directory-making helpers: rank 0 first (not those built there only)
    random_data.plan,  # random_split generator; unseeded synthetic datasets
    set_orders.plan,  # list(set(words)): rank 0's order on every rank (string hashes are per process)
    listed_names.plan,  # run_dir = f"exp{len(os.listdir(root)) + 1}": rank 0's name on every rank
    listed_names.plan_probes,  # while os.path.exists(d): run += 1 ...: rank 0's answers on every rank
    set_orders.plan_elsewhere,  # the project's code orders sets: one string-hash seed on every rank
    device_args.plan,  # --device options: the rank's own GPU
    device_args.plan_handed_in,  # a device parameter of a file whose models are DDP models: the rank's own GPU
    device_choice.report,  # Apple's MPS chosen: no DDP there
    device_tests.plan,  # device == "cuda" of a device made the rank's own (cuda:N): its type is tested
    handed_over.plan_plain_handoffs,  # the DDP model given to no_grad code or beside its plain copy: unwrapped
    handed_over.report,  # functions of other files given the DDP model or a loader
    loop_shapes.plan,  # set_epoch taken back from batch loops and loaders that may not exist there
    file_writes.plan,  # open(p, "wb+") / "a+" / "r+", Path.write_text: one rank writes
    rank_zero_values.plan,  # values read off rank-0 objects (writer.log_dir) on every rank
    rank_zero_forwards.plan,  # a DDP model's forward in code only rank 0 runs (`if writer:`): the plain module
    own_methods.report,  # the model's own members out of reach in another file's function
    interactive.report,  # input() on ranks without a terminal
    batch_coupling.report,  # the split batch size in another file's code; summed losses
    shard_sums.report,  # a shard's sums divided by the whole dataset's size
    progress.report,  # a shard's sample count set against the whole dataset's size
    progress.keep_counted_bars,  # tqdm bars whose count is read stay on every rank
    divergent_exits.report,  # training loops ranks may leave or run a different number of times
    plateau.plan,  # ReduceLROnPlateau stepped with a per-rank metric: averaged over the ranks
    sample_counters.plan,  # counts of training samples that steer the schedule: every rank's
    environment_seeds.report,  # environments seeded alike on every rank (RL)
    unsharded_training.report,  # a wrapped model trains on data nothing sharded, and no item said so
)


def run(recording: Recording, facts: Facts) -> None:
    """Run every planner, in order, over one script's recording."""
    for planner in PLANNERS:
        planner(recording, facts)
