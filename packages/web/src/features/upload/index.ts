export { UploadImagesDialog, type UploadImagesDialogProps } from './UploadImagesDialog';
