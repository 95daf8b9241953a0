# fish completion for sitepatch(1); installed as share/fish/vendor_completions.d/sitepatch.fish.
# Commands, each command's options, and the values of options that take a fixed set.
# tests/e2e/install_test.cpp runs it (`complete -C`) against what `sitepatch COMMAND
# --help` prints: a command or option added there and not here fails it.

# The command typed so far: the first word that is neither an option nor a global
# option's value. Prints nothing (and fails) before one is typed.
function __sitepatch_command
    set -l words (commandline -opc)
    set -e words[1]
    set -l skip 0
    for w in $words
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case --venv --host --ssh-command --state-dir --color --colour --lock-timeout
                set skip 1
            case '-*'
            case '*'
                echo $w
                return 0
        end
    end
    return 1
end

# What the environment on the command line holds ($argv[1]: ids or dists): the binary
# typed is asked (`__complete`), with the --venv, --host, --ssh-command and --state-dir typed.
function __sitepatch_ask
    set -l words (commandline -opc)
    set -l args
    for i in (seq 2 (count $words))
        switch $words[$i]
            case --venv --host --ssh-command --state-dir
                set -l j (math $i + 1)
                test $j -le (count $words); and set args $args $words[$i] $words[$j]
            case '--venv=*' '--host=*' '--ssh-command=*' '--state-dir=*'
                set args $args $words[$i]
        end
    end
    $words[1] $args __complete $argv[1] 2>/dev/null
end

function __sitepatch_using
    contains -- (__sitepatch_command) $argv
end

function __sitepatch_needs_command
    not __sitepatch_command >/dev/null
end

# Files only where an argument is one.
complete -c sitepatch -f

# The commands.
complete -c sitepatch -n __sitepatch_needs_command -a plan -d "Show the diff the recipes would make; writes nothing"
complete -c sitepatch -n __sitepatch_needs_command -a apply -d "Apply recipes: all edits or none"
complete -c sitepatch -n __sitepatch_needs_command -a reapply -d "Apply patches again from the recipes the history recorded"
complete -c sitepatch -n __sitepatch_needs_command -a sync -d "Bring the environment to exactly a set of recipes"
complete -c sitepatch -n __sitepatch_needs_command -a list -d "List the applied patches"
complete -c sitepatch -n __sitepatch_needs_command -a status -d "After an upgrade: which patches need reapplying"
complete -c sitepatch -n __sitepatch_needs_command -a verify -d "Check each patched file against the history"
complete -c sitepatch -n __sitepatch_needs_command -a rollback -d "Undo applied patches"
complete -c sitepatch -n __sitepatch_needs_command -a adopt -d "Record files others changed as the patch's applied state"
complete -c sitepatch -n __sitepatch_needs_command -a refresh -d "Fold a hand change on top of an applied patch into its recipe"
complete -c sitepatch -n __sitepatch_needs_command -a wheel -d "Write the patched wheel, for an image or a private index"
complete -c sitepatch -n __sitepatch_needs_command -a edit -d "Before editing a distribution by hand: save pip's bytes"
complete -c sitepatch -n __sitepatch_needs_command -a capture -d "Turn hand edits of a distribution into a recipe"
complete -c sitepatch -n __sitepatch_needs_command -a log -d "Show the history of applies and rollbacks"
complete -c sitepatch -n __sitepatch_needs_command -a show -d "Print an applied patch as a unified diff"
complete -c sitepatch -n __sitepatch_needs_command -a audit -d "Find functions that reach operations dynamo cannot trace"
complete -c sitepatch -n __sitepatch_needs_command -a try -d "Run a command with recipes in effect; writes nothing"
complete -c sitepatch -n __sitepatch_needs_command -a rules -d "List the rules audit uses"
complete -c sitepatch -n __sitepatch_needs_command -a explain -d "Read a dynamo log: each graph break and a recipe fixing it"
complete -c sitepatch -n __sitepatch_needs_command -a help -d "Show a command's options"
complete -c sitepatch -n "__sitepatch_using help" -a "plan apply reapply sync list status verify rollback adopt refresh wheel edit capture log show audit try rules explain"

# The global options, before or after the command.
complete -c sitepatch -s h -l help -d "Print the help and exit"
complete -c sitepatch -l version -d "Print the version and what it was built against"
complete -c sitepatch -l venv -r -F -d "Environment root or its Python executable"
complete -c sitepatch -l host -x -a "(__fish_print_hostnames)" -d "Patch an environment on another machine over ssh"
complete -c sitepatch -l ssh-command -x -d "The ssh client and its options"
complete -c sitepatch -l state-dir -x -a "(__fish_complete_directories)" -d "Where the history lives"
complete -c sitepatch -l json -d "Print the result as one JSON document"
complete -c sitepatch -l no-pager -d "Print diffs directly, not through a pager"
complete -c sitepatch -l color -l colour -x -a "auto always never" -d "When to use colour"
complete -c sitepatch -l lock-timeout -x -d "Seconds to wait for another writer"
complete -c sitepatch -s v -l verbose -d "Say more; -vv adds debug output"
complete -c sitepatch -s q -l quiet -d "Print only results and errors"

# plan and apply: recipe files, folders, or -.
complete -c sitepatch -n "__sitepatch_using plan apply try" -F
complete -c sitepatch -n "__sitepatch_using apply" -s n -l dry-run -d "Print what would change; write nothing"
complete -c sitepatch -n "__sitepatch_using apply" -l force -d "Apply despite requires:, on-upgrade: or unbound names"
complete -c sitepatch -n "__sitepatch_using apply" -l system -d "Also write into folders the environment shares"
complete -c sitepatch -n "__sitepatch_using apply" -l check -d "Import every patched module after writing; roll back if one fails"
complete -c sitepatch -n "__sitepatch_using apply" -l check-with -x -a "(__fish_complete_command)" -d "Run CMD after writing; roll back if it fails"

# reapply
complete -c sitepatch -n "__sitepatch_using reapply" -l all -d "Every patch an upgrade or a reinstall took away"
complete -c sitepatch -n "__sitepatch_using reapply" -s n -l dry-run -d "Print what would change; write nothing"
complete -c sitepatch -n "__sitepatch_using reapply" -l force -d "Apply despite requires:, on-upgrade: or unbound names"
complete -c sitepatch -n "__sitepatch_using reapply" -l system -d "Also write into folders the environment shares"
complete -c sitepatch -n "__sitepatch_using reapply" -l check -d "Import every patched module after writing; roll back if one fails"
complete -c sitepatch -n "__sitepatch_using reapply" -l check-with -x -a "(__fish_complete_command)" -d "Run CMD after writing; roll back if it fails"

# sync
complete -c sitepatch -n "__sitepatch_using sync" -l check -d "Write nothing; exit 3 when not in sync"
complete -c sitepatch -n "__sitepatch_using sync" -s n -l dry-run -d "Print the steps; write nothing"
complete -c sitepatch -n "__sitepatch_using sync" -l keep-others -d "Leave applied patches outside the set applied"
complete -c sitepatch -n "__sitepatch_using sync" -l force -d "Apply despite names the module never binds"

# Patch ids and distribution names, from the environment on the command line.
complete -c sitepatch -n "__sitepatch_using reapply rollback show adopt verify refresh" -a "(__sitepatch_ask ids)"

# refresh
complete -c sitepatch -n "__sitepatch_using refresh" -s o -l output -r -F -d "Where to write the refreshed recipe"
complete -c sitepatch -n "__sitepatch_using refresh" -s n -l dry-run -d "Print the recipe's diff; write nothing"
complete -c sitepatch -n "__sitepatch_using edit capture" -a "(__sitepatch_ask dists)"

# wheel: recipe files, folders, or -.
complete -c sitepatch -n "__sitepatch_using wheel" -F
complete -c sitepatch -n "__sitepatch_using wheel" -l from -r -F -d "The wheel to patch"
complete -c sitepatch -n "__sitepatch_using wheel" -l download -x -d "Fetch the wheel with pip download (NAME==VERSION)"
complete -c sitepatch -n "__sitepatch_using wheel" -s o -l output-dir -x -a "(__fish_complete_directories)" -d "The folder the patched wheel is written to"
complete -c sitepatch -n "__sitepatch_using wheel" -l version -x -d "The patched wheel's version"
complete -c sitepatch -n "__sitepatch_using wheel" -l python -x -a "(__fish_complete_command)" -d "The Python that compiles each edited module"
complete -c sitepatch -n "__sitepatch_using wheel" -s n -l dry-run -d "Print the diff; write nothing"
complete -c sitepatch -n "__sitepatch_using wheel" -l check -d "Compare the environment with these recipes; exit 3 if it differs"

# rollback
complete -c sitepatch -n "__sitepatch_using rollback" -l all -d "Roll back every applied patch"
complete -c sitepatch -n "__sitepatch_using rollback" -s n -l dry-run -d "Print the diff rollback would make; write nothing"
complete -c sitepatch -n "__sitepatch_using rollback" -l missing-ok -d "Skip ids that are not applied"

# adopt
complete -c sitepatch -n "__sitepatch_using adopt" -s n -l dry-run -d "Print the changes adopt would record; write nothing"

# edit
complete -c sitepatch -n "__sitepatch_using edit" -l copy -x -a "(__fish_complete_directories)" -d "Copy its Python sources to DIR to edit there"
complete -c sitepatch -n "__sitepatch_using edit" -s n -l dry-run -d "Check its files are pip's; save nothing"

# capture
complete -c sitepatch -n "__sitepatch_using capture" -l id -x -d "The recipe id"
complete -c sitepatch -n "__sitepatch_using capture" -s o -l output -r -F -d "Where to write the recipe"
complete -c sitepatch -n "__sitepatch_using capture" -l original -r -F -d "A wheel or unpacked tree of the installed version"
complete -c sitepatch -n "__sitepatch_using capture" -l from -x -a "(__fish_complete_directories)" -d "Read the edits from a copy (edit --copy)"
complete -c sitepatch -n "__sitepatch_using capture" -l hash-all -d "Hash every file, not only changed ones"
complete -c sitepatch -n "__sitepatch_using capture" -l whole-file -d "Put a file with changes outside any definition in whole"
complete -c sitepatch -n "__sitepatch_using capture" -l system -d "Also capture files in folders the environment shares"
complete -c sitepatch -n "__sitepatch_using capture" -s n -l dry-run -d "Print the diff and the edits; record nothing"

# log
complete -c sitepatch -n "__sitepatch_using log" -s p -l patch -d "Follow each entry with its diff"
complete -c sitepatch -n "__sitepatch_using log" -s n -l max-count -x -d "Show only the newest N entries"

# show
complete -c sitepatch -n "__sitepatch_using show" -l recipe -d "Print the recipe as it was applied"

# audit
complete -c sitepatch -n "__sitepatch_using audit" -l depth -x -d "Follow chains of at most N calls"
complete -c sitepatch -n "__sitepatch_using audit" -l package -x -a "(__sitepatch_ask dists)" -d "Scan every module of an installed distribution"
complete -c sitepatch -n "__sitepatch_using audit" -l module -x -d "Scan a module or a package"
complete -c sitepatch -n "__sitepatch_using audit" -l all -d "Scan every installed distribution"
complete -c sitepatch -n "__sitepatch_using audit" -l path -x -a "(__fish_complete_directories)" -d "Scan every .py file under a folder"
complete -c sitepatch -n "__sitepatch_using audit" -l rules -r -F -d "A rules file to add"
complete -c sitepatch -n "__sitepatch_using audit" -l no-default-rules -d "Use only the --rules files"
complete -c sitepatch -n "__sitepatch_using audit" -l suggest -d "Print a recipe disabling each chain"
complete -c sitepatch -n "__sitepatch_using audit" -l min-severity -x -a "error warning info" -d "Only the rules this severe or more"
complete -c sitepatch -n "__sitepatch_using audit" -l category -x -d "Only the rules of this category"
complete -c sitepatch -n "__sitepatch_using audit" -l rule -x -d "Only this rule"
complete -c sitepatch -n "__sitepatch_using audit" -l summary -d "A count per rule and per package, the worst of each"
complete -c sitepatch -n "__sitepatch_using audit" -l fail-on -x -a "error warning info" -d "Exit 3 on a finding this severe"
complete -c sitepatch -n "__sitepatch_using audit" -l strict -d "Exit 3 also on an incomplete answer"
complete -c sitepatch -n "__sitepatch_using audit" -l callgraph -r -F -d "Write the walked call graph as JSON"
complete -c sitepatch -n "__sitepatch_using audit" -l ignore -r -F -d "An ignore file"
complete -c sitepatch -n "__sitepatch_using audit" -l format -x -a "text json sarif" -d "Output format"

# rules
complete -c sitepatch -n "__sitepatch_using rules" -l rules -r -F -d "A rules file to add"
complete -c sitepatch -n "__sitepatch_using rules" -l no-default-rules -d "Leave out the shipped set"
complete -c sitepatch -n "__sitepatch_using rules" -l calibrate -d "Run each probe under torch.compile here"

# explain: log files, or -.
complete -c sitepatch -n "__sitepatch_using explain" -F
complete -c sitepatch -n "__sitepatch_using explain" -l list-hints -d "List the hints and exit"
complete -c sitepatch -n "__sitepatch_using explain" -l recipe -r -F -d "Write the fixes as a recipe"
complete -c sitepatch -n "__sitepatch_using explain" -l hints -r -F -d "A hints file to add"
complete -c sitepatch -n "__sitepatch_using explain" -l rules -r -F -d "A rules file to add to audit's"
complete -c sitepatch -n "__sitepatch_using explain" -l run -x -a "(__fish_complete_command)" -d "Run the repro and prove fixes by trying them"
complete -c sitepatch -n "__sitepatch_using explain" -l max-runs -x -d "At most N runs of the repro"
complete -c sitepatch -n "__sitepatch_using explain" -s j -l jobs -x -d "Candidates run at once"
complete -c sitepatch -n "__sitepatch_using explain" -l cold -d "Start every run as its own Python, not forked from a warm one"
complete -c sitepatch -n "__sitepatch_using explain" -l oversubscribe -d "Run --jobs at once even without two cores for each"
