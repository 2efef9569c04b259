;; Batch check of flakesense.el with lsp-mode against stand-in servers (run by run.sh): opens
;; $FILE, where flakesense must start as an add-on beside pylsp, and runs a server command.  The
;; lsp-* settings below only keep optional UI packages out of a batch session.
(setq debug-on-error t)
(require 'lsp-mode)
(setq lsp-session-file (make-temp-file "lsp-session")
      lsp-auto-guess-root t
      lsp-enable-file-watchers nil
      lsp-restart 'ignore
      lsp-keep-workspace-alive nil
      lsp-enable-snippet nil lsp-modeline-workspace-status-enable nil lsp-modeline-code-actions-enable nil
      lsp-modeline-diagnostics-enable nil lsp-headerline-breadcrumb-enable nil lsp-lens-enable nil lsp-diagnostics-provider :none)
(load (getenv "FLAKESENSE_EL"))
(setq flakesense-warning-threshold 0.9
      flakesense-exclude '("gen/**")
      flakesense-default-models 'off)
(flakesense-lsp-mode-setup)
(find-file (getenv "FILE"))
(lsp)
(let ((deadline (+ (float-time) 60)))
  (while (and (< (float-time) deadline)
              (< (seq-count (lambda (w) (eq (lsp--workspace-status w) 'initialized)) (lsp-workspaces))
                 2))
    (accept-process-output nil 0.2))
  (accept-process-output nil 2))
(message "workspaces: %S" (mapcar #'lsp--workspace-print (lsp-workspaces)))
(maphash (lambda (file diagnostics)
           (dolist (d diagnostics) (message "diagnostic %s: %s" file (lsp:diagnostic-message d))))
         (lsp-diagnostics t))
(lsp-workspace-command-execute "flakesense.markFlaky" (vector (lsp--buffer-uri) "Test#waits"))
(accept-process-output nil 1)
(lsp-workspace-shutdown (car (lsp-workspaces)))
(message "done")
