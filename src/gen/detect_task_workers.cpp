// Task queues a project's code defines. A Celery app, Dramatiq actors or an
// arq WorkerSettings class queue jobs that only a worker process runs, and
// that process is the queue's own program, never the server an image runs.
// An image whose command is the API alone accepts jobs that never finish;
// finding the queue lets gen say the worker's command (and write it into
// compose.yaml) instead of leaving that to be found in production.
#include <algorithm>
#include <map>
#include <sstream>

#include "detect_internal.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::gen {
namespace fs = std::filesystem;

namespace {

// The module a file imports as: src/svc/tasks.py is svc.tasks, a package's
// __init__.py is the package.
std::string module_of(const std::string& rel) {
  std::string module = rel.rfind("src/", 0) == 0 ? rel.substr(4) : rel;
  module.resize(module.size() - 3);  // .py
  const std::string init = "/__init__";
  if (module.size() > init.size() &&
      module.compare(module.size() - init.size(), init.size(), init) == 0)
    module.resize(module.size() - init.size());
  std::replace(module.begin(), module.end(), '/', '.');
  return module;
}

struct QueueApp {
  std::string rel, module, object, where;
  bool in_function = false;  // made inside a function (a factory): no module-level name
};

// The worker's command from the row's, with the first app's module and
// object and, for {modules}, every module that defines part of it.
std::vector<std::string> worker_command(const TaskQueueFact& q, const std::vector<QueueApp>& apps) {
  std::vector<std::string> cmd;
  for (const auto& word : q.worker) {
    if (word == "{modules}") {
      for (const auto& app : apps) cmd.push_back(app.module);
      continue;
    }
    if (word.find("{object}") != std::string::npos && apps.front().in_function) {
      // An app a factory makes has no name at the module's level for the
      // worker to import: the command says what must be filled in.
      cmd.push_back("MODULE:NAME (where a module's top level holds the app " + apps.front().where +
                    " makes)");
      continue;
    }
    cmd.push_back(fill_placeholder(fill_placeholder(word, "{module}", apps.front().module),
                                   "{object}", apps.front().object));
  }
  return cmd;
}

// A row's pattern with the app's object in it ({object}); the object is an
// identifier, so it needs no escaping.
std::regex with_object(const std::string& pattern, const std::string& object) {
  return std::regex(fill_placeholder(pattern, "{object}", object));
}

// The project's own Python files (not its tests, examples or nested
// projects), each read once for every row and every question asked of it.
struct ProjectSource {
  std::string rel, text;
};

bool any_line_matches(const std::string& text, const std::regex& pattern) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, pattern)) return true;
  return false;
}

// A worker imports the app's module and runs the jobs registered by then.
// Where that module registers none itself (no include=, no
// autodiscover_tasks(), no jobs of its own), the jobs live in modules that
// import the app: -A names the one that defines them, which holds the app
// under the same name. Several such modules are said, not guessed.
void point_at_jobs(const TaskQueueFact& q, const std::vector<ProjectSource>& sources,
                   const std::string& app_text, QueueApp& app, std::string& caveat) {
  if (q.tasks.empty() || app.in_function) return;
  if (any_line_matches(app_text, with_object(q.registers, app.object))) return;
  const std::regex job = with_object(q.tasks, app.object);
  std::vector<std::string> modules;
  for (const auto& source : sources)
    if (source.rel != app.rel && any_line_matches(source.text, job))
      modules.push_back(module_of(source.rel));
  if (modules.size() == 1) {
    app.module = modules.front();
  } else if (modules.size() > 1) {
    caveat = "the jobs in " + join(modules, ", ") + " register only when imported, and " +
             app.where + " imports none: list them in the app's include=[...]";
  }
}

// The queues the project's code sends jobs to, in the order first named,
// when one of them is not the queue a worker consumes unless told; empty
// when the worker needs no queue named (or the app lists its queues).
std::vector<std::string> named_queues(const TaskQueueFact& q,
                                      const std::vector<ProjectSource>& sources) {
  if (!q.queues) return {};
  std::vector<std::string> names;
  for (const auto& source : sources) {
    if (q.queues_unless && any_line_matches(source.text, *q.queues_unless)) return {};
    for (std::sregex_iterator it(source.text.begin(), source.text.end(), *q.queues), end; it != end;
         ++it)
      for (std::size_t group = 1; group < it->size(); ++group)
        if ((*it)[group].matched) {
          const std::string name = (*it)[group].str();
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
          break;
        }
  }
  if (std::all_of(names.begin(), names.end(),
                  [&](const std::string& n) { return n == q.default_queue; }))
    return {};
  if (!q.default_queue.empty() &&
      std::find(names.begin(), names.end(), q.default_queue) == names.end())
    names.push_back(q.default_queue);
  return names;
}

// The row's queue_args for `names`: {queue} one word a queue, {queues} the
// names joined by commas.
void add_queue_args(const TaskQueueFact& q, const std::vector<std::string>& names,
                    std::vector<std::string>& cmd) {
  for (const auto& word : q.queue_args) {
    if (word == "{queue}") {
      cmd.insert(cmd.end(), names.begin(), names.end());
      continue;
    }
    cmd.push_back(fill_placeholder(word, "{queues}", join(names, ",")));
  }
}

}  // namespace

void find_task_workers(const fs::path& root, PythonProject& py,
                       const std::vector<fs::path>& python_sources,
                       std::vector<Evidence>& evidence) {
  std::map<std::string, std::vector<QueueApp>> found;  // by row, for rows that follow it
  std::vector<ProjectSource> sources;
  bool read = false;
  for (const TaskQueueFact& q : builtin_tables().task_queues) {
    if (!depends_on(py, q.package)) continue;
    if (!q.app_of.empty() && found.count(q.app_of) == 0) continue;
    if (!read) {
      read = true;
      for (const auto& file : python_sources) {
        const std::string rel = relative_to_root(file, root);
        // Tests, examples and nested projects define queues of their own.
        if (!is_test_path(rel) && !in_nested_project(file, root))
          sources.push_back({rel, read_text(file)});
      }
    }
    std::vector<QueueApp> apps;
    std::string app_text;
    for (const auto& source : sources) {
      const std::string& rel = source.rel;
      std::istringstream lines(source.text);
      int number = 0;
      for (std::string line; std::getline(lines, line);) {
        ++number;
        std::smatch m;
        if (!std::regex_search(line, m, q.pattern)) continue;
        apps.push_back({rel, module_of(rel), m.size() > 1 ? m[1].str() : std::string(),
                        rel + ":" + std::to_string(number), line[0] == ' ' || line[0] == '\t'});
        if (apps.size() == 1) app_text = source.text;
        break;
      }
    }
    if (apps.empty()) continue;
    std::string caveat;
    const std::string where = apps.front().where;
    if (!q.app_of.empty()) {
      // A second process of an app found before: its command takes that
      // app's module and object; the match here only says it is needed.
      apps = found.at(q.app_of);
    } else {
      point_at_jobs(q, sources, app_text, apps.front(), caveat);
      found[q.name] = apps;
    }
    // The worker imports the modules from the working directory: a src/
    // layout that nothing installs needs src on the path.
    if (!py.installable)
      for (const auto& app : apps)
        if (app.where.rfind("src/", 0) == 0) import_from_src(py, app.where, evidence);
    PythonProject::TaskWorker worker;
    worker.queue = q.name;
    worker.service = q.service;
    worker.what = q.what;
    worker.cmd = worker_command(q, apps);
    // A worker consumes its default queue alone: jobs sent to another one
    // the code names would wait for ever.
    if (const auto names = named_queues(q, sources); !names.empty()) {
      add_queue_args(q, names, worker.cmd);
      const std::string queues =
          "a worker consumes only the queues its command names (none "
          "named: " +
          q.default_queue + "), and the code sends jobs to " + join(names, ", ") +
          ": the command names them all";
      caveat = caveat.empty() ? queues : caveat + "; " + queues;
    }
    worker.where = where;
    worker.source = q.source;
    worker.caveat = caveat;
    worker.unnamed = std::any_of(q.worker.begin(), q.worker.end(), [&](const std::string& w) {
      return w.find("{object}") != std::string::npos && apps.front().in_function;
    });
    evidence.push_back(
        {worker.where, q.what + ", which " + join(worker.cmd, " ") + " starts (" + q.source + ")"});
    py.task_workers.push_back(std::move(worker));
  }
}

}  // namespace imgsmith::gen
