;; Batch check of flakesense.el with lsp-mode and the real server (run by run.sh): opens $FILE,
;; where flakesense starts as an add-on beside a stand-in pylsp, waits for the warning on the test
;; $FLAGGED in Flymake, lists the code actions on the test $MARK, executes "Mark as flaky" as
;; `M-x lsp-execute-code-action' does, and waits, without editing, for the new diagnostic on
;; $MARK.  What it saw goes to $REPORT as JSON for run.sh to judge.  The lsp-* settings below keep
;; optional UI packages out of a batch session.
(setq debug-on-error t)
;; As an interactive Emacs does at startup: the packages' autoloads, lsp-mode's hooks among them.
(package-activate-all)
(require 'lsp-mode)
(require 'flymake)
(load (expand-file-name "report.el" (file-name-directory load-file-name)))
(setq lsp-session-file (make-temp-file "lsp-session")
      lsp-auto-guess-root t
      lsp-enable-file-watchers nil
      lsp-restart 'ignore
      lsp-keep-workspace-alive nil
      lsp-enable-snippet nil lsp-modeline-workspace-status-enable nil lsp-modeline-code-actions-enable nil
      lsp-modeline-diagnostics-enable nil lsp-headerline-breadcrumb-enable nil lsp-lens-enable nil
      lsp-diagnostics-provider :flymake)
(load (getenv "FLAKESENSE_EL"))
(setq flakesense-program (getenv "FLAKESENSE"))
(flakesense-lsp-mode-setup)

(defun check-diagnostics ()
  "The diagnostics Flymake shows, but for the stand-in pylsp's.
lsp-mode gives Flymake the message alone, without the server's name."
  (delq nil (mapcar (lambda (d)
                      (and (not (string-match-p "pylsp saw this file" (flymake-diagnostic-text d)))
                           (check-diagnostic (flymake-diagnostic-beg d) (flymake-diagnostic-end d)
                                             (flymake-diagnostic-text d))))
                    (flymake-diagnostics))))

(find-file (getenv "FILE"))
(lsp)
;; lsp-mode 8 may hand Flymake flakesense's first diagnostics only at Flymake's next run (see
;; the README's lsp-mode note); a user's first edit runs it.  The wait runs it as an edit would.
;; The check after the mark below runs nothing: that diagnostic must show by itself.
(check-wait 120 (lambda ()
                  (flymake-start)
                  (check-on-test (check-diagnostics) (getenv "FLAGGED"))))
(check-put 'workspaces (mapcar (lambda (w) (format "%s" (lsp--workspace-server-id w))) (lsp-workspaces)))
(check-put 'before (check-diagnostics))

(check-goto-test (getenv "MARK"))
(let* ((actions (append (lsp-code-actions-at-point) nil))
       (mark (seq-find (lambda (action) (string-prefix-p "Mark as flaky" (lsp:code-action-title action)))
                       actions)))
  (check-put 'actions (mapcar #'lsp:code-action-title actions))
  (lsp-execute-code-action mark))
(check-put 'index (file-exists-p (expand-file-name ".flakesense/index" (lsp-workspace-root))))
(check-wait 10 (lambda () (check-on-test (check-diagnostics) (getenv "MARK"))))
(check-put 'after (check-diagnostics))
(check-write-report)
;; lsp-mode 8.0.0 sends `shutdown' with `{}' as its params, which the server refuses as invalid
;; params until the server side accepts them (another change); lsp-mode then kills the server.
(dolist (workspace (lsp-workspaces))
  (ignore-errors (lsp-workspace-shutdown workspace)))
(kill-emacs 0)
