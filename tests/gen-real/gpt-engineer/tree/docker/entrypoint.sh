#!/usr/bin/env bash
project_dir="/project"
gpt-engineer $project_dir "$@"
