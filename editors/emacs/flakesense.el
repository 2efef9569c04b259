;;; flakesense.el --- flakesense language server for eglot, lsp-mode -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0
;; Package-Requires: ((emacs "28.1"))

;;; Commentary:

;; flakesense predicts flaky tests from their code.  Its language server,
;; `flakesense serve' (LSP over stdio), reports the tests of Java, Python
;; and Rust files that look flaky, with code actions to mark a test as
;; flaky or not flaky and to show the similar known tests.
;;
;; Load this file, then call the setup of the client you use:
;;
;;   (load "/path/to/flakesense/editors/emacs/flakesense.el")
;;   (flakesense-eglot-setup)          ; eglot (built into Emacs 29+)
;;   ;; or
;;   (flakesense-lsp-mode-setup)       ; lsp-mode
;;
;; then start the client as usual (M-x eglot, or M-x lsp) in a Java,
;; Python or Rust buffer.
;;
;; * lsp-mode runs several servers per buffer.  flakesense is registered
;;   as an add-on (`:add-on? t'), so it starts beside the language's
;;   usual server (jdtls, pylsp, pyright, rust-analyzer, ...) instead of
;;   competing with it.  Nothing else is needed.
;;
;; * eglot runs one server per buffer (per project and major mode).  An
;;   entry of `eglot-server-programs' for java-mode that starts flakesense
;;   would replace jdtls.  To have both, put an LSP multiplexer in
;;   between: one process that eglot takes for a single server, which
;;   runs both behind it and merges their diagnostics and code actions.
;;   By default this file uses rassumfrassum (`pip install rassumfrassum'
;;   installs its `rass' command):
;;
;;     rass -- jdtls -- flakesense serve
;;
;;   `flakesense-eglot-companions' names the servers that run beside
;;   flakesense in each mode; those not installed are left out (with a
;;   message), and without any of them, or without rass, flakesense
;;   runs alone.  With `flakesense-eglot-multiplexer' set to nil,
;;   flakesense runs alone instead, and those buffers lose the
;;   language's own server.  Another multiplexer, lspx, takes `--lsp' once
;;   per server (lspx --lsp "rust-analyzer" --lsp "flakesense serve"); it
;;   is not wired up here, but that command can go into
;;   `eglot-server-programs' by hand.
;;
;; Settings.  The server reads `flakesense.toml' at the project root: the
;; best place for a project's settings, since every editor and
;; `flakesense check' read it.  The variables below override it for your
;; Emacs; nil (the default) keeps the file's value or the server's
;; default.  They are sent as the server's initialization options and,
;; with lsp-mode, also answered to the server's `workspace/configuration'
;; requests for the section "flakesense".  With eglot those requests are
;; answered from `eglot-workspace-configuration', for example in a
;; project's .dir-locals.el:
;;
;;   ((nil . ((eglot-workspace-configuration
;;             . (:flakesense (:warningThreshold 0.9))))))

;;; Code:

(require 'cl-lib)
(require 'project)

(defgroup flakesense nil
  "Flaky test predictions from the flakesense language server."
  :group 'tools
  :prefix "flakesense-")

(defcustom flakesense-program "flakesense"
  "The flakesense executable: a name looked up on `exec-path', or a file.
`cargo install --locked --path CHECKOUT' puts it in ~/.cargo/bin."
  :type 'string)

(defcustom flakesense-warning-threshold nil
  "A score at or above this is a warning.
nil keeps the value of flakesense.toml, else 0.95."
  :type '(choice (const :tag "From flakesense.toml, else 0.95" nil) number))

(defcustom flakesense-information-threshold nil
  "A score above this is information.
nil keeps the value of flakesense.toml, else 0.5."
  :type '(choice (const :tag "From flakesense.toml, else 0.5" nil) number))

(defcustom flakesense-k nil
  "How many nearest known tests vote.
nil keeps the value of flakesense.toml, else 7."
  :type '(choice (const :tag "From flakesense.toml, else 7" nil) integer))

(defcustom flakesense-default-models nil
  "Whether the models shipped inside flakesense judge tests.
nil keeps the value of flakesense.toml, else on; `off' leaves only
the project's index and `flakesense-models'."
  :type '(choice (const :tag "From flakesense.toml, else on" nil)
                 (const :tag "On" t)
                 (const :tag "Off" off)))

(defcustom flakesense-debounce-ms nil
  "Milliseconds of quiet after a keystroke before a file is judged again.
nil keeps the server's default (300)."
  :type '(choice (const :tag "The server's default, 300" nil) integer))

(defcustom flakesense-models nil
  "Further model files, added to those of flakesense.toml.
Relative names are relative to the project root."
  :type '(repeat file))

(defcustom flakesense-exclude nil
  "Glob patterns of files never analysed, such as \"vendor/**\".
They are added to those of flakesense.toml."
  :type '(repeat string))

(defcustom flakesense-eglot-multiplexer 'rass
  "How eglot runs flakesense beside the language's usual server.
`rass': through rassumfrassum, with the servers of
`flakesense-eglot-companions'.  nil: flakesense alone, in place of
the language's usual server."
  :type '(choice (const :tag "rassumfrassum (rass)" rass)
                 (const :tag "flakesense alone" nil)))

(defcustom flakesense-eglot-companions
  '(((java-mode java-ts-mode) ("jdtls"))
    ((python-mode python-ts-mode) ("pylsp"))
    ((rust-mode rust-ts-mode rustic-mode) ("rust-analyzer")))
  "For eglot: major modes, and the servers that run beside flakesense.
Each entry is (MODES COMMAND...), a COMMAND being a list (PROGRAM
ARGS...).  The first command answers what only one server can
\(completion, hover, definitions); the diagnostics and code actions
of all are merged.  For Python, (\"ty\" \"server\") and (\"ruff\"
\"server\") work too."
  :type '(repeat (cons (repeat symbol) (repeat (repeat string)))))

(defun flakesense--project-root ()
  "The root of the current project, or `default-directory'."
  (let ((project (project-current)))
    (if project (project-root project) default-directory)))

(defun flakesense-settings ()
  "The server's settings from the variables above, as a plist.
nil when none is set.  Keys are the server's (camelCase); lists are
vectors, so that they become JSON arrays."
  (let ((root (flakesense--project-root)))
    (append
     (and flakesense-warning-threshold
          (list :warningThreshold flakesense-warning-threshold))
     (and flakesense-information-threshold
          (list :informationThreshold flakesense-information-threshold))
     (and flakesense-k (list :k flakesense-k))
     (and flakesense-default-models
          (list :defaultModels
                (if (eq flakesense-default-models 'off) :json-false t)))
     (and flakesense-debounce-ms (list :debounceMs flakesense-debounce-ms))
     (and flakesense-models
          (list :models
                (vconcat (mapcar (lambda (model) (expand-file-name model root))
                                 flakesense-models))))
     (and flakesense-exclude (list :exclude (vconcat flakesense-exclude))))))

;;;; eglot

(defvar flakesense--eglot-entries nil
  "The entries `flakesense-eglot-setup' added to `eglot-server-programs'.")

(defun flakesense--installed (companions)
  "The commands of COMPANIONS whose program is installed.
The others are named in a message: a server that cannot start would
end rass, and eglot with it (\"Server died\")."
  (let ((installed (cl-remove-if-not
                    (lambda (command) (executable-find (car command)))
                    companions)))
    (dolist (command (cl-set-difference companions installed :test #'eq))
      (message "flakesense: %s is not installed; flakesense runs without it"
               (car command)))
    installed))

(defun flakesense-eglot-contact (companions)
  "A contact for `eglot-server-programs': flakesense, beside COMPANIONS.
A function, so that the settings are read whenever a server starts.
Companions that are not installed are left out, and without any (or
without rass) flakesense runs alone."
  (lambda (&rest _)
    (let* ((settings (flakesense-settings))
           (flakesense (list flakesense-program "serve"))
           (companions (and (eq flakesense-eglot-multiplexer 'rass)
                            (flakesense--installed companions)))
           (rass (and companions (executable-find "rass"))))
      (when (and companions (not rass))
        (message "flakesense: rass is not installed (pip install rassumfrassum); flakesense runs alone"))
      (if rass
          ;; rass gives every server the same initialization options,
          ;; except the value of the key "rass": its keys are patterns
          ;; matched against each server's name, and the matching value
          ;; goes to that server alone.
          (append
           '("rass")
           (cl-mapcan (lambda (command) (cons "--" (copy-sequence command)))
                      companions)
           (cons "--" flakesense)
           (and settings
                (list :initializationOptions
                      (list :rass (list :flakesense settings)))))
        (append flakesense
                (and settings (list :initializationOptions settings)))))))

(defun flakesense-eglot-setup ()
  "Make eglot start flakesense in Java, Python and Rust buffers.
The entries go in front of `eglot-server-programs', so they win over
eglot's own for those modes.  Calling it again replaces them, after a
change of `flakesense-eglot-companions' for example."
  (interactive)
  (require 'eglot)
  (defvar eglot-server-programs)
  (setq eglot-server-programs
        (cl-set-difference eglot-server-programs flakesense--eglot-entries
                           :test #'eq))
  (setq flakesense--eglot-entries
        (mapcar (lambda (entry)
                  (cons (car entry) (flakesense-eglot-contact (cdr entry))))
                flakesense-eglot-companions))
  (setq eglot-server-programs
        (append flakesense--eglot-entries eglot-server-programs)))

;;;; lsp-mode

(declare-function lsp-register-client "lsp-mode")
(declare-function lsp-register-custom-settings "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode")
(declare-function lsp-activate-on "lsp-mode")
(declare-function lsp-configuration-section "lsp-mode")
(declare-function lsp--set-configuration "lsp-mode")
(declare-function make-lsp-client "lsp-mode")
;; Bound to address one server, as `with-lsp-workspace' does; that macro
;; would have to be defined before this file is loaded.
(defvar lsp--cur-workspace)

(defvar lsp-diagnostics--flymake-report-fn)
(declare-function lsp-diagnostics--flymake-update-diagnostics "lsp-diagnostics")
(declare-function flymake-start "flymake")

(defun flakesense--lsp-mode-report-always (&rest _)
  "Hand Flymake the diagnostics lsp-mode holds for this buffer.
Runs after lsp-mode's Flymake backend.  lsp-mode 8 reports a buffer's
diagnostics only on the backend's first run; when another server of the
buffer opens it, Flymake runs again, and diagnostics published before
then (flakesense's come within milliseconds) stayed hidden until the next
publication, that is until an edit."
  (when (bound-and-true-p lsp-diagnostics--flymake-report-fn)
    (lsp-diagnostics--flymake-update-diagnostics)))

(defun flakesense--lsp-mode-show-again ()
  "Run Flymake again once a server has opened this buffer.
lsp-mode gathers a buffer's diagnostics from the servers that have opened
it: flakesense's, published before the buffer was opened in its
workspace, are shown only by a Flymake run after that."
  (when (bound-and-true-p flymake-mode)
    (flymake-start)))

(defun flakesense-lsp-mode-setup ()
  "Register flakesense with lsp-mode, as an add-on for Java, Python, Rust."
  (interactive)
  (require 'lsp-mode)
  (with-eval-after-load 'lsp-diagnostics
    (advice-add 'lsp-diagnostics--flymake-backend :after
                #'flakesense--lsp-mode-report-always))
  (add-hook 'lsp-after-open-hook #'flakesense--lsp-mode-show-again)
  ;; What lsp-mode answers to `workspace/configuration' for "flakesense"
  ;; and sends in `workspace/didChangeConfiguration'; nil values are left
  ;; out.
  (lsp-register-custom-settings
   `(("flakesense.warningThreshold" flakesense-warning-threshold)
     ("flakesense.informationThreshold" flakesense-information-threshold)
     ("flakesense.k" flakesense-k)
     ("flakesense.defaultModels"
      ,(lambda () (plist-get (flakesense-settings) :defaultModels)))
     ("flakesense.debounceMs" flakesense-debounce-ms)
     ("flakesense.models"
      ,(lambda () (plist-get (flakesense-settings) :models)))
     ("flakesense.exclude"
      ,(lambda () (plist-get (flakesense-settings) :exclude)))))
  (lsp-register-client
   (make-lsp-client
    :new-connection
    (lsp-stdio-connection
     (lambda () (list flakesense-program "serve"))
     ;; Without the executable lsp-mode skips this client, quietly.
     (lambda () (executable-find flakesense-program)))
    :activation-fn (lsp-activate-on "java" "python" "rust")
    ;; An add-on starts beside the language's main server.
    :add-on? t
    :server-id 'flakesense
    :initialization-options #'flakesense-settings
    :initialized-fn
    (lambda (workspace)
      (let ((lsp--cur-workspace workspace))
        (lsp--set-configuration
         (lsp-configuration-section "flakesense")))))))

(provide 'flakesense)

;;; flakesense.el ends here
