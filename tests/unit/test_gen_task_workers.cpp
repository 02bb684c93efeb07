// A task queue's jobs run only in its worker process (src/gen/
// detect_task_workers.cpp, data/task-queues.json). When the image's command
// is the API that queues them, gen says the worker's command and writes it
// into compose.yaml; an image that accepts jobs nothing runs is never silent.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "imgsmith/gen/gen.hpp"
#include "project_tree.hpp"

using namespace imgsmith::gen;

namespace {

struct QueueTree : imgsmith::testing::ProjectTree {
  using ProjectTree::ProjectTree;
  Plan plan(Options o = Options{}) const { return make_plan(detect_project(dir), o); }
};

// The warning about a queue's worker, or "" when there is none.
std::string worker_warning(const Plan& plan) {
  for (const auto& w : plan.warnings)
    if (w.find("starts none. Run one from the same image") != std::string::npos) return w;
  return "";
}

const char* const kApi =
    "from fastapi import FastAPI\nfrom worker import score\napp = FastAPI()\n\n"
    "@app.post('/score')\ndef post():\n    return {'id': score.delay().id}\n";
const char* const kCeleryWorker =
    "import os\nfrom celery import Celery\n\n"
    "celery_app = Celery('worker', broker=os.environ['BROKER_URL'])\n\n"
    "@celery_app.task\ndef score():\n    return 1\n";

}  // namespace

TEST_CASE("gen task queues: a Celery app beside a FastAPI server gets its worker said and run") {
  QueueTree t({{"requirements.txt", "fastapi\nuvicorn\ncelery[redis]==5.4.0\n"},
               {"api/__init__.py", ""},
               {"api/main.py", kApi},
               {"worker.py", kCeleryWorker}});
  Options o;
  o.compose = true;
  const Plan plan = t.plan(o);
  REQUIRE(plan.cmd.front() == "uvicorn");
  const std::string w = worker_warning(plan);
  CHECK(w.rfind("worker.py:4: jobs queued with Celery run only in a worker process", 0) == 0);
  CHECK(w.find("docker run proj celery -A worker:celery_app worker --loglevel=INFO") !=
        std::string::npos);
  CHECK(w.find("docs.celeryq.dev") != std::string::npos);  // the row's source
  REQUIRE(plan.workers.size() == 1);
  CHECK(plan.workers[0].service == "celery-worker");
  const std::string compose = render_plan(plan).compose;
  CHECK(compose.find("  celery-worker:\n") != std::string::npos);
  CHECK(compose.find(
            R"(    command: ["celery", "-A", "worker:celery_app", "worker", "--loglevel=INFO"])") !=
        std::string::npos);
  // The server keeps its port; the worker publishes none.
  CHECK(compose.find("ports:") == compose.rfind("ports:"));

  // Under --k8s the worker is a Deployment of the app's image with the
  // worker's command as args (the probe entrypoint kept), with no Service.
  o.k8s = true;
  const Rendered k8s = render_plan(t.plan(o));
  std::string deployment;
  int services = 0;
  for (const auto& [file, yaml] : k8s.k8s) {
    if (file == "celery-worker.yaml") deployment = yaml;
    if (yaml.find("kind: Service") != std::string::npos) ++services;
  }
  CHECK(services == 1);
  CHECK(deployment.find("  name: proj-celery-worker\n") != std::string::npos);
  CHECK(deployment.find("          image: proj:latest\n") != std::string::npos);
  CHECK(
      deployment.find(
          R"(          args: ["celery", "-A", "worker:celery_app", "worker", "--loglevel=INFO"])") !=
      std::string::npos);
  CHECK(deployment.find("containerPort") == std::string::npos);
  CHECK(deployment.find("readinessProbe") == std::string::npos);
}

TEST_CASE("gen task queues: Dramatiq's actors in several modules, arq's settings under src/") {
  QueueTree dramatiq(
      {{"requirements.txt", "flask\ngunicorn\ndramatiq[redis]\n"},
       {"app.py", "from flask import Flask\napp = Flask(__name__)\n"},
       {"jobs/__init__.py", ""},
       {"jobs/emails.py", "import dramatiq\n\n@dramatiq.actor\ndef send():\n    pass\n"},
       {"jobs/thumbs.py",
        "import dramatiq\n\n@dramatiq.actor(max_retries=3)\ndef resize():\n    pass\n"},
       {"tests/test_jobs.py", "import dramatiq\n@dramatiq.actor\ndef t():\n    pass\n"}});
  const std::string w = worker_warning(dramatiq.plan());
  CHECK(w.find("dramatiq jobs.emails jobs.thumbs (") != std::string::npos);
  CHECK(w.find("tests") == std::string::npos);  // a test's actor is the test's

  QueueTree arq(
      {{"pyproject.toml",
        "[project]\nname = \"svc\"\nversion = \"1\"\ndependencies = [\"fastapi\", "
        "\"uvicorn\", \"arq>=0.25\"]\n"},
       {"src/svc/__init__.py", ""},
       {"src/svc/main.py", "from fastapi import FastAPI\napp = FastAPI()\n"},
       {"src/svc/worker.py",
        "async def job(ctx):\n    pass\n\nclass WorkerSettings:\n    functions = [job]\n"}});
  CHECK(worker_warning(arq.plan()).find(" arq svc.worker.WorkerSettings") != std::string::npos);
}

TEST_CASE("gen task queues: no worker is said when the image runs it or the queue is not one") {
  // The command is the worker itself.
  QueueTree t({{"requirements.txt", "celery\n"}, {"worker.py", kCeleryWorker}});
  Options o;
  o.cmd = {"celery", "-A", "worker:celery_app", "worker"};
  const Plan told = t.plan(o);
  CHECK(worker_warning(told).empty());
  CHECK(told.workers.empty());
  // A class of the project's own named Celery, in a project without the
  // package, is no task queue.
  QueueTree own(
      {{"requirements.txt", "fastapi\nuvicorn\n"},
       {"main.py", "from fastapi import FastAPI\nfrom plants import Celery\napp = FastAPI()\n"},
       {"plants.py", "class Celery:\n    pass\n\nstalk = Celery()\n"}});
  const Plan plan = own.plan();
  CHECK(worker_warning(plan).empty());
  CHECK(plan.workers.empty());
}

TEST_CASE("gen task queues: an app a factory makes has its worker said with the name to fill in") {
  // Flask's pattern: make_celery(app) builds the Celery app inside a
  // function, and the module-level name is wherever it is called.
  QueueTree t({{"requirements.txt", "flask\ngunicorn\ncelery\n"},
               {"app.py",
                "from flask import Flask\nfrom factory import make_celery\n"
                "app = Flask(__name__)\nqueue = make_celery(app)\n"},
               {"factory.py",
                "from celery import Celery\n\ndef make_celery(app):\n"
                "    celery = Celery(app.import_name)\n    return celery\n"}});
  Options o;
  o.compose = true;
  const Plan plan = t.plan(o);
  const std::string w = worker_warning(plan);
  CHECK(w.find("celery -A MODULE:NAME (where a module's top level holds the app factory.py:4 "
               "makes) worker") != std::string::npos);
  CHECK(w.find("factory:celery") == std::string::npos);  // a local name, no worker could import
  CHECK(plan.workers.empty());                           // compose runs no half-known command
}

TEST_CASE("gen task queues: the worker imports the module that defines the jobs") {
  // The FastAPI full-stack template's shape: the Celery app in one module
  // with no include=, its jobs in another that imports it. A worker started
  // on the app's module would register no job.
  const char* const app_module =
      "from celery import Celery\n\ncelery_app = Celery('worker', broker='amqp://guest@queue//')\n";
  const char* const jobs =
      "from app.core.celery_app import celery_app\n\n"
      "@celery_app.task(acks_late=True)\ndef test_celery(word):\n    return word\n";
  QueueTree t({{"requirements.txt", "fastapi\nuvicorn\ncelery\n"},
               {"app/__init__.py", ""},
               {"app/main.py", "from fastapi import FastAPI\napp = FastAPI()\n"},
               {"app/core/__init__.py", ""},
               {"app/core/celery_app.py", app_module},
               {"app/worker.py", jobs}});
  CHECK(worker_warning(t.plan()).find("celery -A app.worker:celery_app worker") !=
        std::string::npos);

  // An app that lists its jobs (include=) is the module to start.
  QueueTree listed(
      {{"requirements.txt", "fastapi\nuvicorn\ncelery\n"},
       {"main.py", "from fastapi import FastAPI\napp = FastAPI()\n"},
       {"queue.py", "from celery import Celery\napp = Celery('q', include=['jobs'])\n"},
       {"jobs.py", "from queue import app\n\n@app.task\ndef run():\n    pass\n"}});
  CHECK(worker_warning(listed.plan()).find("celery -A queue:app worker") != std::string::npos);

  // Jobs in two modules the app does not import: said, not guessed.
  QueueTree spread(
      {{"requirements.txt", "fastapi\nuvicorn\ncelery\n"},
       {"main.py", "from fastapi import FastAPI\napp = FastAPI()\n"},
       {"queue.py", "from celery import Celery\napp = Celery('q')\n"},
       {"emails.py", "from celery import shared_task\n\n@shared_task\ndef send():\n    pass\n"},
       {"thumbs.py", "from queue import app\n\n@app.task\ndef resize():\n    pass\n"}});
  const std::string w = worker_warning(spread.plan());
  CHECK(w.find("celery -A queue:app worker") != std::string::npos);
  CHECK(w.find("the jobs in emails, thumbs register only when imported") != std::string::npos);
  CHECK(w.find("include=[...]") != std::string::npos);
}

TEST_CASE("gen task queues: a beat schedule needs Celery's scheduler beside the worker") {
  QueueTree t({{"requirements.txt", "fastapi\nuvicorn\ncelery\n"},
               {"main.py", "from fastapi import FastAPI\napp = FastAPI()\n"},
               {"worker.py", std::string(kCeleryWorker) +
                                 "\ncelery_app.conf.beat_schedule = {'nightly': {'task': "
                                 "'worker.score', 'schedule': 86400}}\n"}});
  Options o;
  o.compose = true;
  const Plan plan = t.plan(o);
  REQUIRE(plan.workers.size() == 2);
  CHECK(plan.workers[1].service == "celery-beat");
  CHECK(plan.workers[1].cmd == std::vector<std::string>{"celery", "-A", "worker:celery_app", "beat",
                                                        "--loglevel=INFO",
                                                        "--schedule=/tmp/celerybeat-schedule"});
  bool said = false;
  for (const auto& w : plan.warnings)
    said = said ||
           (w.rfind("worker.py:10: Celery's periodic jobs are sent only by its scheduler", 0) == 0);
  CHECK(said);
  CHECK(render_plan(plan).compose.find("  celery-beat:\n") != std::string::npos);

  // The image that runs the worker still needs the scheduler, and only it.
  Options worker_cmd;
  worker_cmd.cmd = {"celery", "-A", "worker:celery_app", "worker", "-l", "INFO"};
  const Plan runs_worker = t.plan(worker_cmd);
  REQUIRE(runs_worker.workers.size() == 1);
  CHECK(runs_worker.workers[0].service == "celery-beat");
}

TEST_CASE("gen task queues: Huey's consumer, whose command has no plain word but its program") {
  QueueTree t({{"requirements.txt", "flask\ngunicorn\nhuey[redis]\n"},
               {"app.py", "from flask import Flask\napp = Flask(__name__)\n"},
               {"jobs/__init__.py", ""},
               {"jobs/queue.py",
                "from huey import RedisHuey\n\nhuey = RedisHuey('my-app')\n\n"
                "@huey.task()\ndef add(a, b):\n    return a + b\n"}});
  const Plan plan = t.plan();
  REQUIRE(plan.workers.size() == 1);
  CHECK(plan.workers[0].service == "huey-consumer");
  CHECK(plan.workers[0].cmd == std::vector<std::string>{"huey_consumer.py", "jobs.queue.huey"});
  CHECK(worker_warning(plan).rfind(
            "jobs/queue.py:3: jobs queued with Huey run only in its consumer", 0) == 0);
}

TEST_CASE(
    "gen task queues: RQ's workers run its scheduler, and its cron and rq-scheduler are said") {
  // RQ: jobs queued with enqueue_in() wait for a worker with the scheduler.
  QueueTree rq({{"requirements.txt", "flask\ngunicorn\nrq\n"},
                {"app.py",
                 "from datetime import timedelta\nfrom flask import Flask\nfrom rq import Queue\n"
                 "from redis import Redis\napp = Flask(__name__)\nq = Queue(connection=Redis())\n"
                 "@app.post('/later')\ndef later():\n"
                 "    return q.enqueue_in(timedelta(minutes=5), print).id\n"},
                {"cron_config.py",
                 "from rq.cron import register\nfrom app import later\n"
                 "register(later, queue_name='default', interval=300)\n"}});
  const Plan plan = rq.plan();
  REQUIRE(plan.workers.size() == 2);
  CHECK(plan.workers[0].cmd == std::vector<std::string>{"rq", "worker", "--with-scheduler"});
  CHECK(plan.workers[1].service == "rq-cron");
  CHECK(plan.workers[1].cmd == std::vector<std::string>{"rq", "cron", "cron_config"});
  // An image that runs the worker still needs the cron scheduler.
  Options worker_cmd;
  worker_cmd.cmd = {"rq", "worker", "--url", "redis://redis:6379"};
  const Plan runs_worker = rq.plan(worker_cmd);
  REQUIRE(runs_worker.workers.size() == 1);
  CHECK(runs_worker.workers[0].service == "rq-cron");

  QueueTree scheduler({{"requirements.txt", "fastapi\nuvicorn\nrq\nrq-scheduler\n"},
                       {"main.py",
                        "from fastapi import FastAPI\nfrom redis import Redis\n"
                        "from rq_scheduler import Scheduler\napp = FastAPI()\n"
                        "scheduler = Scheduler(connection=Redis())\n"}});
  const Plan scheduled = scheduler.plan();
  bool said = false;
  for (const auto& w : scheduled.workers)
    said = said || w.cmd == std::vector<std::string>{"rqscheduler"};
  CHECK(said);
}

TEST_CASE("gen task queues: periodiq for Dramatiq's periodic actors, Taskiq's scheduler") {
  QueueTree periodiq({{"requirements.txt", "flask\ngunicorn\ndramatiq[redis]\nperiodiq\n"},
                      {"app.py", "from flask import Flask\napp = Flask(__name__)\n"},
                      {"jobs.py",
                       "import dramatiq\nfrom periodiq import PeriodiqMiddleware, cron\n\n"
                       "@dramatiq.actor(periodic=cron('0 * * * *'))\ndef hourly():\n    pass\n"}});
  const Plan plan = periodiq.plan();
  REQUIRE(plan.workers.size() == 2);
  CHECK(plan.workers[0].cmd == std::vector<std::string>{"dramatiq", "jobs"});
  CHECK(plan.workers[1].service == "periodiq");
  CHECK(plan.workers[1].cmd == std::vector<std::string>{"periodiq", "jobs"});
  // Dramatiq without periodic actors needs no scheduler.
  QueueTree plain({{"requirements.txt", "flask\ngunicorn\ndramatiq[redis]\nperiodiq\n"},
                   {"app.py", "from flask import Flask\napp = Flask(__name__)\n"},
                   {"jobs.py", "import dramatiq\n\n@dramatiq.actor\ndef send():\n    pass\n"}});
  CHECK(plain.plan().workers.size() == 1);

  QueueTree taskiq({{"requirements.txt", "fastapi\nuvicorn\ntaskiq\ntaskiq-redis\n"},
                    {"main.py", "from fastapi import FastAPI\napp = FastAPI()\n"},
                    {"tkq.py",
                     "from taskiq import TaskiqScheduler\n"
                     "from taskiq.schedule_sources import LabelScheduleSource\n"
                     "from taskiq_redis import ListQueueBroker\n\n"
                     "broker = ListQueueBroker('redis://redis:6379')\n"
                     "scheduler = TaskiqScheduler(broker=broker, "
                     "sources=[LabelScheduleSource(broker)])\n"}});
  const Plan scheduled = taskiq.plan();
  REQUIRE(scheduled.workers.size() == 2);
  CHECK(scheduled.workers[0].cmd == std::vector<std::string>{"taskiq", "worker", "tkq:broker"});
  CHECK(scheduled.workers[1].service == "taskiq-scheduler");
  CHECK(scheduled.workers[1].cmd ==
        std::vector<std::string>{"taskiq", "scheduler", "tkq:scheduler"});
}

TEST_CASE(
    "gen task queues: a worker consumes the queues the code sends jobs to, not its default alone") {
  // RQ's worker reads the queue "default" unless told: jobs sent to "high"
  // would wait for ever.
  QueueTree rq({{"requirements.txt", "flask\ngunicorn\nrq\n"},
                {"app.py",
                 "from flask import Flask\nfrom redis import Redis\nfrom rq import Queue\n"
                 "app = Flask(__name__)\nhigh = Queue('high', connection=Redis())\n"
                 "low = Queue(name=\"low\", connection=Redis())\n"}});
  const Plan plan = rq.plan();
  REQUIRE(plan.workers.size() == 1);
  CHECK(plan.workers[0].cmd ==
        std::vector<std::string>{"rq", "worker", "--with-scheduler", "high", "low", "default"});
  CHECK(worker_warning(plan).find("the code sends jobs to high, low, default") !=
        std::string::npos);
  // Celery's worker reads "celery" unless told: -Q names a task's queue
  // and a route's, the default among them.
  QueueTree celery(
      {{"requirements.txt", "fastapi\nuvicorn\ncelery\n"},
       {"main.py", "from fastapi import FastAPI\napp = FastAPI()\n"},
       {"worker.py", std::string(kCeleryWorker) +
                         "\n@celery_app.task(queue='gpu')\ndef embed():\n    return 2\n"
                         "celery_app.conf.task_routes = {'worker.score': {'queue': 'cpu'}}\n"}});
  CHECK(celery.plan().workers[0].cmd ==
        std::vector<std::string>{"celery", "-A", "worker:celery_app", "worker", "--loglevel=INFO",
                                 "-Q", "gpu,cpu,celery"});
  // An app that lists its queues (task_queues) has its workers consume
  // them all: nothing is added.
  QueueTree listed({{"requirements.txt", "fastapi\nuvicorn\ncelery\n"},
                    {"main.py", "from fastapi import FastAPI\napp = FastAPI()\n"},
                    {"worker.py", std::string(kCeleryWorker) +
                                      "\nfrom kombu import Queue\n"
                                      "celery_app.conf.task_queues = [Queue('gpu')]\n"
                                      "@celery_app.task(queue='gpu')\ndef embed():\n    pass\n"}});
  CHECK(listed.plan().workers[0].cmd.back() == "--loglevel=INFO");
  // Only the default named: nothing to add.
  QueueTree plain({{"requirements.txt", "flask\ngunicorn\nrq\n"},
                   {"app.py",
                    "from flask import Flask\nfrom rq import Queue\napp = Flask(__name__)\n"
                    "q = Queue('default')\n"}});
  CHECK(plain.plan().workers[0].cmd ==
        std::vector<std::string>{"rq", "worker", "--with-scheduler"});
}
