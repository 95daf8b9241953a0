// capture of lines typed into a method: an insert-before/-after placed by the statement
// beside them, against `Class.method`; a few changed lines a replace; the whole
// definition only when most of it changed, and never the class for one method.
#include <catch2/catch.hpp>

#include "unit/capture_support.hpp"

using namespace pytest;
using sitepatch::python::capture;

namespace {

// requests 2.31.0's HTTPAdapter.send, shortened: the `else:` above the anchor is found
// three times in the method, which made capture write the whole class.
const std::string kAdapter =
    "class HTTPAdapter(BaseAdapter):\n"
    "    \"\"\"The built-in HTTP Adapter for urllib3.\"\"\"\n"
    "\n"
    "    def __init__(self, pool_connections=10):\n"
    "        self._pool_connections = pool_connections\n"
    "\n"
    "    def send(self, request, stream=False, timeout=None):\n"
    "        \"\"\"Sends PreparedRequest object.\"\"\"\n"
    "        try:\n"
    "            conn = self.get_connection(request.url)\n"
    "        except LocationValueError as e:\n"
    "            raise InvalidURL(e, request=request)\n"
    "        else:\n"
    "            pass\n"
    "\n"
    "        chunked = not (request.body is None or \"Content-Length\" in request.headers)\n"
    "\n"
    "        if isinstance(timeout, tuple):\n"
    "            try:\n"
    "                connect, read = timeout\n"
    "                timeout = TimeoutSauce(connect=connect, read=read)\n"
    "            except ValueError:\n"
    "                raise ValueError(\"Invalid timeout\")\n"
    "        elif isinstance(timeout, TimeoutSauce):\n"
    "            pass\n"
    "        else:\n"
    "            timeout = TimeoutSauce(connect=timeout, read=timeout)\n"
    "\n"
    "        try:\n"
    "            resp = conn.urlopen(\n"
    "                method=request.method,\n"
    "                url=url,\n"
    "                timeout=timeout,\n"
    "            )\n"
    "        except (ProtocolError, OSError) as err:\n"
    "            raise ConnectionError(err, request=request)\n"
    "        else:\n"
    "            pass\n"
    "\n"
    "        return self.build_response(request, resp)\n"
    "\n"
    "    def close(self):\n"
    "        self.poolmanager.clear()\n";

const std::string kAnchor = "            timeout = TimeoutSauce(connect=timeout, read=timeout)\n";

}  // namespace

TEST_CASE("capture: one line typed above a statement of a method is an insert-before of Class.method",
          "[python][capture][anchor]") {
  std::string edited = with(kAdapter, kAnchor, "            timeout_set = True\n" + kAnchor);
  auto c = capture(kAdapter, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::insert_before);
  CHECK(c.edits[0].kind == TargetKind::function);
  CHECK(c.edits[0].target == "HTTPAdapter.send");
  CHECK(c.edits[0].anchor == "timeout = TimeoutSauce(connect=timeout, read=timeout)");
  CHECK(c.edits[0].code == "timeout_set = True\n");
  check_round_trip_of(kAdapter, edited, c);
}

TEST_CASE("capture: a three-line guard typed above a statement is an insert-before of its lines",
          "[python][capture][anchor]") {
  std::string guard =
      "            if timeout is None:\n"
      "                # the pool's own default\n"
      "                timeout = DEFAULT_POOL_TIMEOUT\n";
  std::string edited = with(kAdapter, kAnchor, guard + kAnchor);
  auto c = capture(kAdapter, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::insert_before);
  CHECK(c.edits[0].target == "HTTPAdapter.send");
  CHECK(c.edits[0].code == "if timeout is None:\n    # the pool's own default\n    timeout = DEFAULT_POOL_TIMEOUT\n");
  check_round_trip_of(kAdapter, edited, c);
}

TEST_CASE("capture: lines typed below a statement are an insert-after of it, a compound one by its header",
          "[python][capture][anchor]") {
  std::string edited = with(kAdapter, kAnchor, kAnchor + "            timeout_set = True\n");
  auto c = capture(kAdapter, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::insert_after);
  CHECK(c.edits[0].target == "HTTPAdapter.send");
  CHECK(c.edits[0].anchor == "timeout = TimeoutSauce(connect=timeout, read=timeout)");
  check_round_trip_of(kAdapter, edited, c);

  // Below a blank line (not right below the `if`) and above a `try:` the method holds
  // twice: no statement places it; a replace, the lines above taken along.
  std::string after_if = with(kAdapter, "\n        try:\n            resp", "\n        log(timeout)\n        try:\n            resp");
  auto d = capture(kAdapter, after_if);
  REQUIRE(d.edits.size() == 1);
  CHECK(d.edits[0].target == "HTTPAdapter.send");
  CHECK(d.edits[0].action == Action::replace);
  check_round_trip_of(kAdapter, after_if, d);

  // Right below a multi-line statement: the anchor is all its lines.
  std::string after_call = with(kAdapter, "            )\n        except (Pro", "            )\n            resp.ok = True\n        except (Pro");
  auto e = capture(kAdapter, after_call);
  REQUIRE(e.edits.size() == 1);
  CHECK(e.edits[0].action == Action::insert_after);
  CHECK(e.edits[0].anchor == "resp = conn.urlopen(\n    method=request.method,\n    url=url,\n    timeout=timeout,\n)");
  check_round_trip_of(kAdapter, after_call, e);
}

TEST_CASE("capture: a changed line whose neighbours repeat takes lines along until the method holds it once",
          "[python][capture][anchor]") {
  // `pass` under `else:` is in the method twice; the lines above it make it unique.
  std::string edited = with(kAdapter, "        else:\n            pass\n\n        chunked",
                            "        else:\n            conn.reset()\n\n        chunked");
  auto c = capture(kAdapter, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::replace);
  CHECK(c.edits[0].target == "HTTPAdapter.send");
  CHECK(std::count(c.edits[0].old_text.begin(), c.edits[0].old_text.end(), '\n') <= 3);
  check_round_trip_of(kAdapter, edited, c);
}

TEST_CASE("capture: a mostly rewritten method is its whole definition, not its class", "[python][capture][anchor]") {
  std::string edited = with(kAdapter, "    def close(self):\n        self.poolmanager.clear()\n",
                            "    def close(self, force=False):\n        self.poolmanager.clear()\n        self.closed = force\n");
  auto c = capture(kAdapter, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::replace_function);
  CHECK(c.edits[0].target == "HTTPAdapter.close");
  check_round_trip_of(kAdapter, edited, c);

  // Every line of a body changed: the body.
  std::string pip = "def f(x):\n    a = 1\n    b = 2\n    return a + b + x\n";
  std::string body = "def f(x):\n    a = 10\n    b = 20\n    return a * b * x\n";
  auto b = capture(pip, body);
  REQUIRE(b.edits.size() == 1);
  CHECK(b.edits[0].action == Action::replace_body);
  check_round_trip_of(pip, body, b);
}

TEST_CASE("capture: lines added where no statement beside them is found once keep the other forms",
          "[python][capture][anchor]") {
  // Both neighbours repeat: not an anchored insert; a replace with lines around it.
  std::string pip = "def f(q):\n    q.flush()\n    q.flush()\n    q.flush()\n    return q\n";
  std::string edited = "def f(q):\n    q.flush()\n    q.flush()\n    q.sync()\n    q.flush()\n    return q\n";
  auto c = capture(pip, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action != Action::insert_before);
  CHECK(c.edits[0].action != Action::insert_after);
  check_round_trip_of(pip, edited, c);
}

TEST_CASE("capture: a method whose small edit does not give it back is the whole method, never its class",
          "[python][capture][anchor]") {
  std::string pip = "class A:\n    def f(self):\n        \"\"\"Doc.\"\"\"\n\n        x = 1\n        return x\n\n"
                    "    def g(self):\n        return 2\n";
  // The body replaced and the blank line below the docstring gone: replace-body keeps
  // that line, so only the whole method gives the bytes back.
  std::string edited = with(pip, "        \"\"\"Doc.\"\"\"\n\n        x = 1\n        return x\n",
                               "        \"\"\"Doc.\"\"\"\n        return 3\n");
  auto c = capture(pip, edited);
  REQUIRE(c.edits.size() == 1);
  CHECK(c.edits[0].action == Action::replace_function);
  CHECK(c.edits[0].target == "A.f");
  check_round_trip_of(pip, edited, c);
  // With the blank line kept, a body whose changed line is found only with most of it:
  // replace-body, its code without the blank line, which stays.
  std::string same = with(pip, "        x = 1\n", "        x = 1\n        x = 1\n        x = 1\n");
  std::string kept = with(same, "        x = 1\n        return x\n", "        x = 5\n        return x\n");
  auto k = capture(same, kept);
  REQUIRE(k.edits.size() == 1);
  CHECK(k.edits[0].action == Action::replace_body);
  CHECK(k.edits[0].code == "x = 1\nx = 1\nx = 5\nreturn x\n");
  check_round_trip_of(same, kept, k);
}
