"""unseen20s: offline stand-in for nni (Microsoft NNI) as imirzadeh/Teacher-Assistant-Knowledge-Distillation's
train.py uses it outside an NNI experiment: get_next_parameter() returns the trial's hyper-parameters (here fixed:
seed / T_student / lambda_student from NNI_PARAMS as JSON, default below), report_* print nothing."""
import json
import os


def get_next_parameter():
    return json.loads(os.environ.get("NNI_PARAMS", '{"seed": 31, "T_student": 4.0, "lambda_student": 0.5}'))


def report_final_result(*a, **k):
    return None


def report_intermediate_result(*a, **k):
    return None


def get_trial_id():
    return os.environ.get("NNI_TRIAL_JOB_ID", "STANDALONE")
