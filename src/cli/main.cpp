// imgsmith: the command line. Each subcommand lives in its own file.
#include <CLI/CLI.hpp>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>

#include "analyze_command.hpp"
#include "completion_command.hpp"
#include "diff_command.hpp"
#include "forgiving_cli.hpp"
#include "gen_command.hpp"
#include "imgsmith/source/layer_scan.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/version.hpp"
#include "output_file.hpp"
#include "probe_command.hpp"
#include "slim_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"imgsmith: small, correct and honest GPU container images."};
  app.set_version_flag("--version", std::string("imgsmith ") + imgsmith::kVersion +
                                        " (gzip layers: " + imgsmith::gzip_inflater() + ")");
  app.require_subcommand(1);
  imgsmith::use_one_error_prefix(app);
  int exit_code = imgsmith::kExitOk;
  imgsmith::register_analyze_command(app, exit_code);
  imgsmith::register_diff_command(app, exit_code);
  imgsmith::register_gen_command(app, exit_code);
  imgsmith::register_slim_command(app, exit_code);
  imgsmith::register_probe_command(app);
  imgsmith::register_completion_command(app);
  // A repeatable option takes one value a use. CLI11 lets a vector option
  // take every word that follows it, so `analyze --deny pip-cache IMAGE`
  // took IMAGE as a second finding and said "IMAGE is required".
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    for (CLI::Option* option : command->get_options()) option->allow_extra_args(false);
  // Exit statuses (README.md): 0 ok, 1 a gate failed, 2 bad input or
  // environment, 70 a bug in imgsmith, 74 an output that could not be
  // written. Every subcommand's output to stdout is checked before the
  // status is given: a report lost to a full disk is not a success.
  try {
    if (argc >= 2 && std::string(argv[1]) == "probe") {
      const int status = imgsmith::probe_main(argc - 2, argv + 2);
      imgsmith::check_standard_output();
      return status;
    }
    app.parse(argc, argv);
    imgsmith::check_standard_output();
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A misspelt command or option is named with the nearest real one.
    if (const auto message = imgsmith::misspelled(app, argc, argv)) {
      std::cerr << "imgsmith: error: " << *message << "\n";
      return imgsmith::kExitBadInput;
    }
    app.exit(e);
    return imgsmith::kExitBadInput;
  } catch (const imgsmith::InputError& e) {
    std::cerr << "imgsmith: error: " << e.what() << "\n";
    return imgsmith::kExitBadInput;
  } catch (const imgsmith::OutputError& e) {
    std::cerr << "imgsmith: error: " << e.what() << "\n";
    return imgsmith::kExitCannotWrite;
  } catch (const std::filesystem::filesystem_error& e) {
    // The machine's files, not imgsmith's logic: a permission, a vanished
    // directory.
    std::cerr << "imgsmith: error: " << e.what() << "\n";
    return imgsmith::kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "imgsmith: error: out of memory; give the process more memory, or analyze "
                 "with --threads 1\n";
    return imgsmith::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "imgsmith: internal error: " << e.what()
              << "\nThis is a bug in imgsmith; please report it with the command line, the "
                 "output of `imgsmith --version` and, if you can, the input.\n";
    return imgsmith::kExitInternalError;
  }
  return exit_code;
}
