// sitepatch __complete ids|dists: what the shell completions offer after a command that
// takes patch ids (reapply, rollback, show, adopt, verify) or distribution names (edit,
// capture, audit --package), one per line. Hidden from --help; quiet on any failure (a
// completion must never print an error into the command line being typed).
#include <iostream>

#include "commands.hpp"

namespace sitepatch::cli {

Runner register_complete(CLI::App& app, const GlobalOptions& g) {
  auto what = std::make_shared<std::string>();
  app.add_option("what", *what, "ids: applied patch ids; dists: installed distribution names")
      ->required()
      ->check(CLI::IsMember({"ids", "dists"}));
  app.group("");  // not listed by --help
  return [&g, what] {
    try {
      Env env = open_env(g);
      if (*what == "ids")
        for (auto& p : engine::verify(*env.session, {})) std::cout << p.id << "\n";
      else
        for (const site::Distribution* d : env.session->distributions().all()) std::cout << d->name << "\n";
    } catch (const std::exception&) {
    }
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli
